// The images the test node runs, built from our Dockerfile by test/k8s/images/build-images.sh (buildah, cached by
// a hash of their inputs) and imported into the node's containerd. No registry is involved: pods name them with
// imagePullPolicy IfNotPresent or Never.
import { join } from 'node:path';
import { repoRoot } from '../binaries.js';
import { HarnessError } from '../../../harness/errors.js';
import { runCommand } from '../../../harness/process.js';

/** Image references by role. */
export interface NodeImages {
  /** Member image per release ("3.5.21" -> "svc:v3.5.21"). */
  svc: Record<string, string>;
  /** The newest release in svc. */
  newest: string;
  /** The operator image (what the chart's defaults name). */
  operator: string;
  /** The kubelet's sandbox ("pause") image. */
  pause: string;
}

function script(): string {
  return join(repoRoot(), 'test', 'k8s', 'images', 'build-images.sh');
}

function parse(stdout: string): NodeImages {
  const last = stdout.trim().split('\n').pop() ?? '';
  let j: { svc?: Record<string, string>; operator?: string; pause?: string };
  try {
    j = JSON.parse(last) as typeof j;
  } catch {
    throw new HarnessError('BAD_ANSWER', `build-images.sh printed no image list on its last line: ${last.slice(0, 200)}`);
  }
  if (!j.svc || !j.operator || !j.pause || Object.keys(j.svc).length === 0) {
    throw new HarnessError('BAD_ANSWER', `build-images.sh printed an incomplete image list: ${last}`);
  }
  const newest = Object.keys(j.svc).sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).pop()!;
  return { svc: j.svc, newest, operator: j.operator, pause: j.pause };
}

/** Builds the images (or finds them cached) and, with a containerd socket, imports them into its k8s.io namespace. */
export async function buildImages(containerdSocket?: string): Promise<NodeImages> {
  const args = containerdSocket ? ['--containerd-address', containerdSocket] : [];
  // progress goes to stderr, which runCommand() keeps for the error message; a cold build takes minutes
  const { stdout } = await runCommand(['bash', script(), ...args], { timeoutMs: 40 * 60_000 });
  return parse(stdout);
}
