// The bash grammar: web-tree-sitter with the WASM grammar shipped in the tree-sitter-bash package,
// loaded once. A parse is copied into plain JS nodes with one cursor pass (every accessor of a
// web-tree-sitter node is a call into WASM), then the WASM tree is freed at once.

import { createRequire } from 'node:module';

import { Language, Parser, type TreeCursor } from 'web-tree-sitter';

/** A node of a parsed command, detached from WASM memory. Offsets are UTF-16 indexes into the text. */
export interface SyntaxNode {
  type: string;
  named: boolean;
  /** the grammar field this node fills in its parent (`name`, `argument`, `redirect`, `body`, …) */
  field: string | null;
  start: number;
  end: number;
  children: SyntaxNode[];
}

/** One parse: the root node and whether the grammar had to recover from an error. */
export interface ParsedScript {
  root: SyntaxNode;
  hasError: boolean;
}

let runtimeReady: Promise<void> | undefined;

/** Initialises the web-tree-sitter runtime once per process (it is process-global WASM state). */
function initRuntime(): Promise<void> {
  runtimeReady ??= Parser.init();
  return runtimeReady;
}

/** Path of `tree-sitter-bash.wasm` inside the installed tree-sitter-bash package. */
export function defaultBashWasmPath(): string {
  return createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
}

/**
 * The loaded bash grammar. Create one with {@link BashGrammar.load} at start-up (it reads the WASM
 * file); `parse` is synchronous and does no I/O.
 */
export class BashGrammar {
  readonly #parser: Parser;
  readonly #types: string[];
  readonly #named: boolean[];
  readonly #fields: (string | null)[];

  private constructor(language: Language) {
    this.#parser = new Parser();
    this.#parser.setLanguage(language);
    const count = language.nodeTypeCount;
    this.#types = new Array<string>(count);
    this.#named = new Array<boolean>(count);
    for (let id = 0; id < count; id++) {
      this.#types[id] = language.nodeTypeForId(id) ?? '';
      this.#named[id] = language.nodeTypeIsNamed(id);
    }
    this.#fields = [null];
    for (let id = 1; id <= language.fieldCount; id++) this.#fields[id] = language.fieldNameForId(id);
  }

  /** Loads the runtime and the grammar (the one asynchronous, file-reading step). */
  static async load(wasmPath: string = defaultBashWasmPath()): Promise<BashGrammar> {
    await initRuntime();
    const language = await Language.load(wasmPath);
    return new BashGrammar(language);
  }

  /** Parses `text` into detached plain nodes. */
  parse(text: string): ParsedScript {
    const tree = this.#parser.parse(text);
    if (tree === null) throw new Error('tree-sitter returned no tree');
    try {
      const cursor = tree.walk();
      try {
        return { root: this.#copy(cursor), hasError: tree.rootNode.hasError };
      } finally {
        cursor.delete();
      }
    } finally {
      tree.delete();
    }
  }

  /** Copies the subtree under the cursor (positioned on the root) without recursion. */
  #copy(cursor: TreeCursor): SyntaxNode {
    const types = this.#types;
    const named = this.#named;
    const fields = this.#fields;
    const make = (): SyntaxNode => {
      const id = cursor.nodeTypeId;
      const type = types[id];
      return {
        // ERROR nodes carry a builtin id outside the grammar's type table
        type: type ?? cursor.nodeType,
        named: type === undefined ? true : (named[id] ?? false),
        field: fields[cursor.currentFieldId] ?? null,
        start: cursor.startIndex,
        end: cursor.endIndex,
        children: [],
      };
    };
    const root = make();
    const stack: SyntaxNode[] = [root];
    for (;;) {
      const parent = stack[stack.length - 1] as SyntaxNode;
      if (cursor.gotoFirstChild()) {
        const child = make();
        parent.children.push(child);
        stack.push(child);
        continue;
      }
      // leaf: move to the next sibling, climbing as needed
      for (;;) {
        if (stack.length === 1) return root;
        stack.pop();
        if (cursor.gotoNextSibling()) {
          const up = stack[stack.length - 1] as SyntaxNode;
          const sibling = make();
          up.children.push(sibling);
          stack.push(sibling);
          break;
        }
        cursor.gotoParent();
      }
    }
  }
}
