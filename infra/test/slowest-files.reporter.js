/**
 * Jest reporter: after a run, the files that took longest, with their seconds (docs/development.md,
 * "Where the test time goes"). The default reporter still prints everything else.
 */
class SlowestFiles {
  constructor(_globalConfig, options = {}) {
    this.count = options.count ?? 20;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .map((file) => ({
        seconds: (file.perfStats.end - file.perfStats.start) / 1000,
        name: file.testFilePath.replace(`${process.cwd()}/`, ''),
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, this.count);
    if (files.length === 0) return;
    const total = (Date.now() - results.startTime) / 1000;
    const lines = files.map((f, i) => `${String(i + 1).padStart(3)} ${f.seconds.toFixed(1).padStart(7)} s  ${f.name}`);
    process.stderr.write(
      `\nSlowest ${files.length} test files (the run: ${total.toFixed(0)} s):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestFiles;
