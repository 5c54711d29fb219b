// Container healthcheck: exits 0 when GET /saude/prontidao on the given port answers 200.
const port = process.argv[2] ?? '8080';
fetch(`http://127.0.0.1:${port}/saude/prontidao`, { signal: AbortSignal.timeout(3000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
