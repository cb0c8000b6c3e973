/* global module */
/**
 * Jest's resolver, plus one rule: a relative import ending in `.js` that names no file is tried as
 * `.ts`. The SDK (sdk/src) is an ES module package whose TypeScript imports its siblings as
 * `./client.js`, as Node's ESM resolution requires; the tests import its sources directly.
 */
module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (err) {
    if (/^\.{1,2}\/.*\.js$/.test(request)) return options.defaultResolver(request.replace(/\.js$/, '.ts'), options);
    throw err;
  }
};
