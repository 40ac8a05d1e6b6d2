// Every query rpc in proto/ is served: the .proto files are read here as text (not through protobufjs),
// each `rpc` with its `google.api.http` GET template, and the gateway's route table must route a path
// made from that template to exactly that method, with one route per annotated template.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundledSchema } from '../dist/src/gateway/descriptors.js';
import { BUNDLED_FILES, PROTO_DIR } from '../dist/src/gateway/proto-root.js';
import { RouteTable } from '../dist/src/gateway/route-table.js';

interface Annotated {
  file: string;
  grpcPath: string;
  template?: string;
}

function protoFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? protoFiles(join(dir, entry.name))
      : entry.name.endsWith('.proto')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The text from an opening brace to its closing one, skipping string literals (templates hold braces). */
function block(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === '"') i = text.indexOf('"', i + 1);
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return text.slice(open, i + 1);
  }
  throw new Error('unbalanced braces');
}

/** The rpcs of a .proto text: `rpc Name(Req) returns (Res) { option (google.api.http).get = "..."; }`. */
function rpcsOf(path: string): Annotated[] {
  const text = readFileSync(path, 'utf8').replace(/^\s*\/\/.*$/gm, '');
  const pkg = /^\s*package\s+([\w.]+)\s*;/m.exec(text)?.[1] ?? '';
  const found: Annotated[] = [];
  for (const service of text.matchAll(/service\s+(\w+)\s*\{/g)) {
    const body = block(text, service.index! + service[0].length - 1);
    for (const rpc of body.matchAll(/rpc\s+(\w+)\s*\([^)]*\)\s*returns\s*\([^)]*\)\s*(\{|;)/g)) {
      const options = rpc[2] === '{' ? block(body, rpc.index! + rpc[0].length - 1) : '';
      const template = /\(google\.api\.http\)\s*(?:\.get\s*=|=\s*\{\s*get\s*:)\s*"([^"]+)"/.exec(options)?.[1];
      found.push({ file: relative(PROTO_DIR, path), grpcPath: `/${pkg}.${service[1]}/${rpc[1]}`, template });
    }
  }
  return found;
}

const annotated = protoFiles(PROTO_DIR).flatMap(rpcsOf);
const table = RouteTable.build(bundledSchema(), { legacy: false });

t.test('the .proto files declare the query services the gateway bundles', async (t) => {
  t.ok(annotated.length > 50, `${annotated.length} rpcs found`);
  const withoutRoute = annotated.filter((rpc) => !rpc.template).map((rpc) => rpc.grpcPath);
  t.same(
    withoutRoute,
    ['/cosmos.reflection.v1.ReflectionService/FileDescriptors'],
    'only the reflection service has no GET route',
  );
  const serviceFiles = new Set(annotated.filter((rpc) => rpc.template).map((rpc) => rpc.file));
  t.same([...serviceFiles].sort(), [...BUNDLED_FILES].sort(), 'every file with an annotated service is bundled');
});

t.test('every annotated rpc has its route, and the table has no other', async (t) => {
  const routed = annotated.filter((rpc) => rpc.template);
  t.equal(table.routes.length, routed.length);
  // A path from the template: every variable gets a value no literal segment has.
  const pathOf = (template: string) => template.replace(/\{[^}=]+=\*\*\}/g, 'x1/x2').replace(/\{[^}]+\}/g, 'x1');
  for (const rpc of routed) {
    // Two templates of one shape (auth's bech32/{address_bytes} and bech32/{address_string}): the first
    // declared wins, on a node as here.
    const first = routed.find((other) => other.file === rpc.file && pathOf(other.template!) === pathOf(rpc.template!))!;
    t.equal(
      table.match(pathOf(rpc.template!))?.route.method.grpcPath,
      first.grpcPath,
      `${rpc.template} -> ${first.grpcPath}`,
    );
  }
});
