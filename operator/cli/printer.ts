// Step output of svc-operator: on a terminal, a step log with a progress bar and waits rewritten in place;
// otherwise one plain timestamped line per step.
import type { StepEvent } from '../orchestrator/index.js';
import { isSettled } from '../planner/steps.js';

/** Writes step events to a stream. */
export class StepPrinter {
  private readonly tty: boolean;
  private pendingWait = false;

  constructor(private readonly out: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean } = process.stdout) {
    this.tty = Boolean((out as { isTTY?: boolean }).isTTY);
  }

  private bar(e: StepEvent): string {
    const p = e.progress;
    if (!p || p.finishedAt !== undefined) return '';
    const total = e.observed.members.length;
    const done = p.membersDone.length;
    const width = 12;
    const fill = total === 0 ? 0 : Math.round((done / total) * width);
    return ` [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${done}/${total} on ${p.to}`;
  }

  /** Prints one step. */
  step(e: StepEvent): void {
    const time = new Date(e.at).toISOString();
    if (!this.tty) {
      this.out.write(`${time} ${e.step.kind}: ${e.line}\n`);
      return;
    }
    const clock = time.slice(11, 19);
    const mark = e.step.kind === 'wait' ? '…' : e.step.kind === 'blocked' ? '✗' : isSettled(e.step) ? '✓' : '▶';
    const text = `${clock} ${mark} ${e.line}${this.bar(e)}`;
    if (this.pendingWait) this.out.write('\r\x1b[K');
    if (e.step.kind === 'wait') {
      this.out.write(text.slice(0, (process.stdout.columns ?? 120) - 1));
      this.pendingWait = true;
    } else {
      this.out.write(`${text}\n`);
      this.pendingWait = false;
    }
  }

  /** Prints a free-form line (ends a pending wait line first). */
  line(s: string): void {
    if (this.pendingWait) {
      this.out.write('\n');
      this.pendingWait = false;
    }
    this.out.write(`${s}\n`);
  }
}
