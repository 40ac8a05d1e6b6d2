// Thread: main
// Route matching for the portable engine, with uWS's rules so both engines route alike: segments split on '/',
// a static segment wins over `:param`, which wins over a trailing `*`; a parameter matches a non-empty segment;
// `*` matches the rest of the path, empty included (`/docs/*` matches `/docs/` but not `/docs`); case-sensitive;
// HEAD is its own method (the engine adds a HEAD route beside each GET route).

interface Node<T> {
  statics: Map<string, Node<T>>;
  param?: Node<T>;
  wildcard?: T;
  value?: T;
}

const newNode = <T>(): Node<T> => ({ statics: new Map() });

export class SegmentRouter<T> {
  readonly #roots = new Map<string, Node<T>>();

  /** The first route added for a method and pattern wins, as in uWS. */
  add(method: string, pattern: string, value: T): void {
    let node = this.#roots.get(method);
    if (!node) this.#roots.set(method, (node = newNode()));
    const segments = pattern.split('/').slice(1);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (segment === '*' && i === segments.length - 1) {
        node.wildcard ??= value;
        return;
      }
      if (segment.startsWith(':')) node = node.param ??= newNode();
      else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    node.value ??= value;
  }

  /** The route of `path` and its parameter values in order, or undefined. */
  match(method: string, path: string): { value: T; params: string[] } | undefined {
    const root = this.#roots.get(method);
    if (!root || path[0] !== '/') return undefined;
    const params: string[] = [];
    const value = find(root, path.split('/'), 1, params);
    return value === undefined ? undefined : { value, params };
  }
}

function find<T>(node: Node<T>, segments: string[], i: number, params: string[]): T | undefined {
  if (i === segments.length) return node.value;
  const segment = segments[i];
  const next = node.statics.get(segment);
  if (next) {
    const found = find(next, segments, i + 1, params);
    if (found !== undefined) return found;
  }
  if (node.param && segment !== '') {
    params.push(segment);
    const found = find(node.param, segments, i + 1, params);
    if (found !== undefined) return found;
    params.pop();
  }
  return node.wildcard;
}
