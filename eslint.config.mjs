import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'sdk/dist/**', 'sdk/src/generated/**', 'test/support/admin-client/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'migrations/**/*.ts', 'sdk/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-globals': ['error', { name: 'parseFloat', message: 'Money stays bigint minor units.' }],
      'no-restricted-syntax': ['error',
        { selector: "CallExpression[callee.property.name='toFixed']", message: 'Money stays bigint minor units: use Money.format.' },
        { selector: "Property[key.name='synchronize'][value.value=true]", message: 'Schema changes go through migrations.' }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    rules: { '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] },
  },
);
