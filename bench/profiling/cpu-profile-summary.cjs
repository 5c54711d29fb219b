// Self and total time by function of a V8 .cpuprofile (bench/profiling/cpu-profile.cjs writes them), as shares
// of the process's busy time (idle samples left out; a system call counts its wall time).
//   node bench/profiling/cpu-profile-summary.cjs /tmp/h30p/hub-api-123-0.cpuprofile [top=50]
//   PERFIL_CHAMADORES=writev node bench/profiling/cpu-profile-summary.cjs <profile>   # who calls writev, by call chain
//   PERFIL_SOB=montarGravacao node bench/profiling/cpu-profile-summary.cjs <profile>  # self time inside that function
const { readFileSync } = require('node:fs');

const [arquivo, topo = '50'] = process.argv.slice(2);
if (!arquivo) {
  process.stderr.write('usage: node bench/profiling/cpu-profile-summary.cjs <file.cpuprofile> [top]\n');
  process.exit(2);
}
const perfil = JSON.parse(readFileSync(arquivo, 'utf8'));
const porId = new Map(perfil.nodes.map((n) => [n.id, n]));
const pai = new Map();
for (const n of perfil.nodes) for (const f of n.children ?? []) pai.set(f, n.id);
const nome = (n) => n.callFrame.functionName || '(anon)';
const chave = (n) =>
  `${nome(n)} ${(n.callFrame.url || '').split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
const ancestrais = function* (id) {
  for (let at = id; at !== undefined; at = pai.get(at)) yield porId.get(at);
};

const proprio = new Map();
const total = new Map();
const chamadores = new Map();
const sob = new Map();
let ocupado = 0;
for (let i = 0; i < perfil.samples.length; i++) {
  const dt = perfil.timeDeltas[i + 1] ?? 0;
  const n = porId.get(perfil.samples[i]);
  if (nome(n) === '(idle)') continue;
  ocupado += dt;
  proprio.set(chave(n), (proprio.get(chave(n)) ?? 0) + dt);
  const vistas = new Set();
  for (const a of ancestrais(n.id)) {
    if (vistas.has(chave(a))) continue;
    vistas.add(chave(a));
    total.set(chave(a), (total.get(chave(a)) ?? 0) + dt);
  }
  if (process.env.PERFIL_CHAMADORES === nome(n)) {
    const cadeia = [...ancestrais(pai.get(n.id))].slice(0, 10).map(nome).join(' < ');
    chamadores.set(cadeia, (chamadores.get(cadeia) ?? 0) + dt);
  }
  if (process.env.PERFIL_SOB && [...ancestrais(n.id)].some((a) => nome(a) === process.env.PERFIL_SOB))
    sob.set(chave(n), (sob.get(chave(n)) ?? 0) + dt);
}
const imprimir = (titulo, mapa) => {
  const soma = [...mapa.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    `\n== ${titulo}: ${((100 * soma) / ocupado).toFixed(2)} % of ${(ocupado / 1e6).toFixed(2)} s busy\n`,
  );
  for (const [k, v] of [...mapa.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topo)))
    process.stdout.write(`${((100 * v) / ocupado).toFixed(2).padStart(6)} %  ${k}\n`);
};
if (process.env.PERFIL_CHAMADORES) imprimir(`callers of ${process.env.PERFIL_CHAMADORES}`, chamadores);
else if (process.env.PERFIL_SOB) imprimir(`self time under ${process.env.PERFIL_SOB}`, sob);
else {
  imprimir('self time', proprio);
  const totais = new Map([...total.entries()]);
  process.stdout.write(`\n== total time (function and what it calls)\n`);
  for (const [k, v] of [...totais.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topo)))
    process.stdout.write(`${((100 * v) / ocupado).toFixed(2).padStart(6)} %  ${k}\n`);
}
