// ESLint flat config of the finger monorepo (STYLE.md "Tooling").
// typescript-eslint's recommended rules without type information (fast: no program is built),
// type-only imports, sorted imports and `node:` specifiers for builtins.
import js from '@eslint/js';
import n from 'eslint-plugin-n';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'bench/results/**',
      '**/coverage/**',
      '**/*.d.ts',
      'modules/pyworker/**',
      '**/__pycache__/**',
    ],
  },
  {
    files: ['**/*.{js,mjs,cjs,ts}'],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { 'simple-import-sort': simpleImportSort, n },
    rules: {
      ...js.configs.recommended.rules,
      // Groups as the code is written: side effects, node: builtins, packages, @finger/*, relative.
      'simple-import-sort/imports': [
        'error',
        { groups: [['^\\u0000'], ['^node:'], ['^(?!@finger/)@?\\w'], ['^@finger/'], ['^\\.']] },
      ],
      'simple-import-sort/exports': 'error',
      'n/prefer-node-protocol': 'error',
    },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    files: ['**/test/**/*.{ts,mjs,js}', 'test/**/*.{ts,mjs,js}', 'bench/**/*.{ts,mjs,js}', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
