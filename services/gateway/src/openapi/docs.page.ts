import type { OpenApiDocument } from '@hub/http';
import { escapeHtml as e, renderSchema, type Schema, typeLabel } from './schema.render';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  description?: string;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const anchor = (text: string) => text.replace(/[^\w-]+/g, '-');

/** "Requires: monitoramento.ler" in the description, as the services document permissions. */
function permissionOf(operation: Operation): string {
  if (Array.isArray(operation.security) && operation.security.length === 0) return 'public (no token)';
  const match = /Requires:\s*(.+)/.exec(operation.description ?? '');
  return match ? match[1]!.trim() : 'a valid token';
}

function renderParameters(parameters: Parameter[]): string {
  if (parameters.length === 0) return '';
  const rows = parameters.map(
    (p) =>
      `<tr><td><code>${e(p.name)}</code></td><td>${e(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td>` +
      `<td class="type">${e(typeLabel(p.schema))}</td><td class="desc">${e(p.description ?? (p.schema?.description as string | undefined) ?? '')}</td></tr>`,
  );
  return `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>type</th><th></th></tr>${rows.join('')}</table>`;
}

function renderContent(content: Record<string, { schema?: Schema }> | undefined, input = false): string {
  return Object.entries(content ?? {})
    .map(
      ([type, { schema }]) =>
        `<div class="content"><span class="ctype">${e(type)}</span>${renderSchema(schema, { input })}</div>`,
    )
    .join('');
}

function renderOperation(method: string, path: string, operation: Operation): string {
  const id = anchor(`${method}-${path}`);
  const body = operation.requestBody
    ? `<h4>Request body</h4>${renderContent(operation.requestBody.content, true)}`
    : '';
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, response]) => {
      const problem = Object.keys(response.content ?? {}).every((t) => t === 'application/problem+json');
      const content = response.content && !problem ? renderContent(response.content) : '';
      const kind = problem && response.content ? ' <a href="#schema-Problema">problem+json</a>' : '';
      return `<li><b class="status s${e(status[0])}">${e(status)}</b> ${e(response.description ?? '')}${kind}${content}</li>`;
    })
    .join('');
  return (
    `<details class="op" id="${e(id)}"><summary><span class="method ${e(method)}">${e(method.toUpperCase())}</span> ` +
    `<code class="path">${e(path)}</code> <span class="summary">${e(operation.summary ?? '')}</span></summary>` +
    `<p><b>Permission:</b> ${e(permissionOf(operation))}</p>${renderParameters(operation.parameters ?? [])}${body}` +
    `<h4>Responses</h4><ul class="responses">${responses}</ul></details>`
  );
}

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#fafbfc}
header{background:#1d2a44;color:#fff;padding:18px 32px}header h1{margin:0 0 4px;font-size:22px}header a{color:#9cc3ff}
main{display:flex;gap:28px;padding:20px 32px}nav{min-width:210px;position:sticky;top:12px;align-self:flex-start}
nav a{display:block;color:#1d2a44;text-decoration:none;padding:2px 0}nav a:hover{text-decoration:underline}
section{flex:1;min-width:0}h2{border-bottom:1px solid #d5dae3;padding-bottom:4px;margin-top:28px}
details.op{background:#fff;border:1px solid #d5dae3;border-radius:6px;margin:6px 0;padding:6px 12px}
details.op summary{cursor:pointer}details.op[open]{box-shadow:0 1px 4px #0001}
.method{display:inline-block;min-width:58px;text-align:center;font:bold 12px monospace;color:#fff;border-radius:4px;padding:2px 4px}
.get{background:#2f7ed8}.post{background:#2e9e5b}.put{background:#a46bd1}.patch{background:#d48a1c}.delete{background:#d2453d}
.path{font-size:14px}.summary{color:#4a5468}.type{color:#6a4fb0;font-family:monospace;font-size:13px;margin:2px 0}
.opt{color:#8a93a6;font-size:12px}.desc{color:#5f6b80;font-size:13px}.ctype{font:12px monospace;color:#8a93a6}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #e1e5ec;padding:3px 8px;text-align:left}
ul.schema{margin:2px 0 2px 6px;padding-left:16px;border-left:2px solid #e6e9f0}ul.responses{padding-left:16px}
.status{font-family:monospace}.s2{color:#2e9e5b}.s4{color:#d48a1c}.s5{color:#d2453d}h4{margin:12px 0 4px}
`;

/** A self-contained reference page of the merged OpenAPI document: no scripts, nothing fetched. */
export function renderDocsPage(document: OpenApiDocument): string {
  const byTag = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(document.paths).sort(([a], [b]) => a.localeCompare(b))) {
    for (const method of METHODS) {
      const operation = operations[method] as Operation | undefined;
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'geral';
      byTag.set(tag, [...(byTag.get(tag) ?? []), renderOperation(method, path, operation)]);
    }
  }
  const tags = [...byTag.keys()].sort();
  const count = [...byTag.values()].reduce((n, ops) => n + ops.length, 0);
  const nav = tags.map((tag) => `<a href="#tag-${e(anchor(tag))}">${e(tag)} (${byTag.get(tag)!.length})</a>`).join('');
  const sections = tags
    .map((tag) => `<h2 id="tag-${e(anchor(tag))}">${e(tag)}</h2>${byTag.get(tag)!.join('')}`)
    .join('');
  const servers = (document.servers ?? []).map((s) => `<code>${e(s.url)}</code> ${e(s.description ?? '')}`).join(' · ');
  const problem = document.components?.schemas?.Problema as Schema | undefined;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(document.info.title)} ${e(document.info.version)}</title><style>${STYLE}</style></head><body>
<header><h1>${e(document.info.title)} <small>${e(document.info.version)}</small></h1>
<div>${e(document.info.description ?? '')} ${count} operations. Servers: ${servers || 'none configured'}. Machine-readable: <a href="openapi.json">openapi.json</a>.
Authentication: <code>Authorization: Bearer &lt;token&gt;</code> from the identity service.</div></header>
<main><nav><b>Tags</b>${nav}<a href="#schema-Problema">Errors (Problema)</a></nav><section>${sections || '<p>No operations: no service answered.</p>'}
<h2 id="schema-Problema">Errors: Problema (application/problem+json)</h2>${renderSchema(problem)}</section></main></body></html>`;
}
