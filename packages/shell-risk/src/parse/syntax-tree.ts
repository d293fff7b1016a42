// The bash grammar: web-tree-sitter with the WASM grammar shipped in the tree-sitter-bash package,
// loaded once. A parse is copied into plain JS nodes with one cursor pass (every accessor of a
// web-tree-sitter node is a call into WASM), then the WASM tree is freed at once.

import { createRequire } from 'node:module';

import { Language, Parser, type TreeCursor } from 'web-tree-sitter';

/**
 * A node of a parsed command, detached from WASM memory. Offsets are UTF-16 indexes into the
 * text; anonymous tokens other than `$` and a command's own tokens carry -1 (never read).
 */
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

/** Parents whose children's field names the model builder reads. */
const FIELD_PARENTS = new Set([
  'command',
  'redirected_statement',
  'file_redirect',
  'heredoc_redirect',
  'variable_assignment',
  'function_definition',
]);
/** Named node types that never have children (tokens). */
const LEAF_TYPES = new Set([
  'word',
  'number',
  'raw_string',
  'ansi_c_string',
  'string_content',
  'variable_name',
  'file_descriptor',
  'heredoc_start',
  'heredoc_end',
  'heredoc_content',
  'comment',
  'special_variable_name',
  'test_operator',
  'regex',
  'extglob_pattern',
]);

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

  /**
   * Copies the subtree under the cursor (positioned on the root) without recursion. Every cursor
   * accessor is a call into WASM, so it asks only what the model builder reads: the field name
   * only under parents that use fields; positions for named leaves, for `$` and for the tokens of
   * a command, while an inner node takes its range from its first and last child (a node spans
   * exactly its children) and asks only when those have none; no child lookup for token types.
   */
  #copy(cursor: TreeCursor): SyntaxNode {
    const types = this.#types;
    const named = this.#named;
    const fields = this.#fields;
    const locate = (node: SyntaxNode): void => {
      node.start = cursor.startIndex;
      node.end = cursor.endIndex;
    };
    const make = (parent: SyntaxNode | null): SyntaxNode => {
      const id = cursor.nodeTypeId;
      const type = types[id];
      // ERROR nodes carry a builtin id outside the grammar's type table
      const isNamed = type === undefined ? true : (named[id] ?? false);
      const node: SyntaxNode = {
        type: type ?? cursor.nodeType,
        named: isNamed,
        field: parent !== null && FIELD_PARENTS.has(parent.type) ? (fields[cursor.currentFieldId] ?? null) : null,
        start: -1,
        end: -1,
        children: [],
      };
      if (isNamed ? LEAF_TYPES.has(node.type) : node.type === '$' || parent?.type === 'command') locate(node);
      return node;
    };
    /** Sets an inner node's range once its children are copied; the cursor is on the node. */
    const finish = (node: SyntaxNode): void => {
      if (node.start >= 0) return;
      const first = node.children[0];
      const last = node.children[node.children.length - 1];
      if (first !== undefined && last !== undefined && first.start >= 0 && last.end >= 0) {
        node.start = first.start;
        node.end = last.end;
      } else {
        locate(node);
      }
    };
    const root = make(null);
    const stack: SyntaxNode[] = [root];
    for (;;) {
      const current = stack[stack.length - 1] as SyntaxNode;
      if (current.named && !LEAF_TYPES.has(current.type) && cursor.gotoFirstChild()) {
        const child = make(current);
        current.children.push(child);
        stack.push(child);
        continue;
      }
      // no children: the cursor is still on it
      if (current.named) finish(current);
      // move to the next sibling, climbing (and finishing each parent) as needed
      for (;;) {
        if (stack.length === 1) return root;
        stack.pop();
        const parent = stack[stack.length - 1] as SyntaxNode;
        if (cursor.gotoNextSibling()) {
          const sibling = make(parent);
          parent.children.push(sibling);
          stack.push(sibling);
          break;
        }
        cursor.gotoParent();
        finish(parent);
      }
    }
  }
}
