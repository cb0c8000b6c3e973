/** Jest 30 with Nest 12 (ESM-only packages) and PGlite: swc transforms TypeScript and the ESM
 * packages under node_modules to CommonJS. swc does not type-check: `npm test` runs tsc first. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testRegex: '\\.(spec|e2e-spec)\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'cjs', 'mjs', 'json'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', {
      jsc: { parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022' },
      module: { type: 'commonjs' },
    }],
    '^.+\\.(c|m)?js$': ['@swc/jest', {
      jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@electric-sql|file-type|strtok3|token-types|@tokenizer|uint8array-extras)/)'],
  testTimeout: 60000,
};
