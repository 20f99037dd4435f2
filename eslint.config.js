// ESLint flat config: typescript-eslint with type information for src and test.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**', '.data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': 'off',
    },
  },
  {
    // The core is pure: no I/O modules may be imported from it.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['pg', 'drizzle-orm*', 'ioredis', 'bullmq', 'express', 'stripe', '@adyen/*', 'opossum'], message: 'src/core is pure: no I/O libraries.' },
          { group: ['node:net', 'node:fs', 'node:fs/*', 'node:http', 'node:https', 'node:child_process'], message: 'src/core is pure: no I/O.' },
          { group: ['../*', '!./*'], message: 'src/core depends on nothing outside src/core.' },
        ],
      }],
    },
  },
  {
    // The embedded provider (src/sandboxes) is a product of its own: production code reaches it
    // only through the configured endpoint, as it would reach the real provider. A connector that
    // imported a sandbox's code could agree with it by construction instead of by wire protocol.
    files: ['src/connectors/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['**/sandboxes', '**/sandboxes/**'], message: 'src/connectors must not import src/sandboxes: talk to the sandbox over its endpoint.' }],
      }],
    },
  },
  {
    // The store and the resources sit below the API, the webhooks and the app: an arrow from them
    // up a floor (the store recording events through src/webhooks) is how a second serializer grew.
    files: ['src/store/**/*.ts', 'src/resources/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['**/webhooks/**', '**/api/**', '**/app/**', '**/jobs/**'], message: 'src/store and src/resources do not import the layers above them.' }],
      }],
    },
  },
  {
    // Rooms that keep their own database take generic helpers from src/pg-kit, never from the
    // gateway's store: the provider and the vault are failure domains (and the vault a PCI scope) of
    // their own. pg-kit itself knows no room.
    files: ['src/sandboxes/**/*.ts', 'src/vault/**/*.ts', 'src/pg-kit/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['**/store', '**/store/**'], message: 'Rooms with their own database use src/pg-kit, not src/store.' }],
      }],
    },
  },
  {
    // Tests stub provider calls with small async functions.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
