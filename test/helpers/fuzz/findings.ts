/**
 * What the fuzzer found, grouped so that one defect is one entry however many cases hit it:
 * by kind, operation and a normalized reason (the server's message with ids, names and
 * quoted values taken out, or the document's first objection to the input). Each entry keeps
 * the smallest example seen and who sent it.
 */
export type FindingKind =
  /** 5xx, an answer the document does not describe, no answer: stopped the property and shrunk. */
  | 'hard'
  /** The in-process server threw outside any request (an uncaught exception): a real process would exit. */
  | 'crash'
  /** GET /healthz did not answer 200 after a batch. */
  | 'health'
  /** Input docs/openapi.json calls valid, refused with 400 (or 415). */
  | 'valid-refused'
  /** Input docs/openapi.json calls invalid, answered with something other than a 4xx. */
  | 'invalid-accepted'
  /** A socket closed with a code the junk it got does not explain, or the server stopped answering. */
  | 'websocket'
  /** A 404 for a real id the caller may not see that differs from the 404 of an id of nothing: an existence oracle. */
  | 'oracle';

export interface Finding {
  kind: FindingKind;
  op: string;
  status: number | null;
  reason: string;
  /** The document's reasons, or the answer's text, for the example. */
  detail: string;
  example: string;
  exampleSize: number;
  count: number;
  callers: Set<string>;
  /** How to replay it. */
  replay?: string;
}

export function normalizeMessage(text: string): string {
  return text
    .split('\n')[0]
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/fz\d+[a-z]*\d*/g, '<user>')
    .replace(/"[^"]*"/g, '"…"')
    .trim()
    .slice(0, 200);
}

export class Findings {
  private readonly map = new Map<string, Finding>();

  add(
    kind: FindingKind,
    op: string,
    status: number | null,
    reason: string,
    info: { detail: string; example: string; caller: string; replay?: string },
  ): boolean {
    const key = `${kind}|${op}|${status}|${reason}`;
    const found = this.map.get(key);
    const size = info.example.length;
    if (found) {
      found.count++;
      found.callers.add(info.caller);
      if (size < found.exampleSize)
        Object.assign(found, { example: info.example, exampleSize: size, detail: info.detail, replay: info.replay ?? found.replay });
      return false;
    }
    this.map.set(key, {
      kind,
      op,
      status,
      reason,
      detail: info.detail,
      example: info.example,
      exampleSize: size,
      count: 1,
      callers: new Set([info.caller]),
      replay: info.replay,
    });
    return true;
  }

  list(kind?: FindingKind): Finding[] {
    return [...this.map.values()]
      .filter((f) => !kind || f.kind === kind)
      .sort((a, b) => (a.op === b.op ? (a.status ?? 0) - (b.status ?? 0) : a.op < b.op ? -1 : 1));
  }

  /**
   * Entries of a kind grouped by what the server said (or the document objected to), each
   * group listing its operations: one defect of the server or the document is one group.
   */
  groups(kind: FindingKind): { title: string; findings: Finding[] }[] {
    const byReason = new Map<string, Finding[]>();
    for (const f of this.list(kind)) {
      const key = kind === 'valid-refused' || kind === 'invalid-accepted' ? `${f.status}|${f.reason}` : `${f.op}|${f.status}|${f.reason}`;
      byReason.set(key, [...(byReason.get(key) ?? []), f]);
    }
    return [...byReason.values()]
      .map((findings) => {
        const f = findings[0];
        const ops = findings.map((x) => x.op);
        const title = `${f.status !== null ? `${f.status} ` : ''}${f.reason}  <-  ${ops.length === 1 ? ops[0] : `${ops.length} operations`}`;
        return { title, findings };
      })
      .sort((a, b) => b.findings.length - a.findings.length || (a.title < b.title ? -1 : 1));
  }

  format(kind: FindingKind): string {
    return this.groups(kind)
      .map((g, i) => {
        const smallest = [...g.findings].sort((a, b) => a.exampleSize - b.exampleSize)[0];
        return [
          `${i + 1}. ${g.title}`,
          ...g.findings.map((f) => `   - ${f.op}: ${f.count} case${f.count === 1 ? '' : 's'} (${[...f.callers].join(', ')})`),
          `   why: ${smallest.detail}`,
          `   example (${smallest.op}): ${smallest.example}`,
          smallest.replay ? `   replay: ${smallest.replay}` : '',
        ]
          .filter(Boolean)
          .join('\n');
      })
      .join('\n');
  }
}
