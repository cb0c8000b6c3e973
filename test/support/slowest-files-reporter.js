/* global module, process */
/**
 * A Jest reporter that prints the ten slowest test files at the end of a run (wall time of each
 * file in its worker, from Jest's perfStats), so that the suite's cost stays visible as it grows.
 * Listed in jest.config.js after the default reporter. SLOWEST_FILES=n prints n instead of ten.
 * Plain JavaScript: Jest loads reporters without its transform.
 */
class SlowestFilesReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const prefix = `${this.rootDir}/`;
    const files = results.testResults
      .map((r) => ({
        file: r.testFilePath.startsWith(prefix) ? r.testFilePath.slice(prefix.length) : r.testFilePath,
        ms: r.perfStats.end - r.perfStats.start,
        failed: r.numFailingTests > 0 || Boolean(r.testExecError),
      }))
      .filter((f) => Number.isFinite(f.ms) && f.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    if (files.length === 0) return;
    const n = Number(process.env.SLOWEST_FILES ?? 10) || 10;
    const sum = files.reduce((total, f) => total + f.ms, 0);
    const wall = Date.now() - results.startTime;
    const lines = files.slice(0, n).map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file}${f.failed ? '  (failed)' : ''}`);
    process.stderr.write(
      `\nSlowest ${Math.min(n, files.length)} of ${files.length} test files (sum of all files ${(sum / 1000).toFixed(1)} s, wall ${(wall / 1000).toFixed(1)} s):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestFilesReporter;
