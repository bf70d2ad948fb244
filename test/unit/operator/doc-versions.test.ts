// Every svc release the chart's NOTES, the READMEs and docs/ name is one our images are built for (a user who copies
// it must not end in ImagePullBackOff). The list of those releases is RELEASES in test/k8s/images/build-images.sh,
// which must be the server's release table (server/releases.ts SUPPORTED_RELEASES).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { SUPPORTED_RELEASES } from '../../../server/releases.js';
import { minorOf } from '../../../operator/api/versions.js';
import { repoRoot } from '../../k8s/binaries.js';

const ROOT = repoRoot();

/** The releases build-images.sh builds an svc image for. */
export function imageReleases(): string[] {
  const script = readFileSync(join(ROOT, 'test', 'k8s', 'images', 'build-images.sh'), 'utf8');
  const m = /^RELEASES=\(([^)]*)\)/m.exec(script);
  if (!m) throw new Error('build-images.sh has no RELEASES=(...) line');
  return m[1].trim().split(/\s+/);
}

/** A version that is not an svc release: the reference etcd's and tools' (in the 40 characters before it), or a library's. */
const NOT_OURS = /(etcd|etcdctl|etcdutl|etcd-server|reference|lmdb|Node|node)[^.\n]{0,40}$/;

/** Versions the text names as svc releases that no image is built for: "file:line: version". */
function strays(file: string, text: string, images: readonly string[]): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    for (const m of line.matchAll(/\b(\d+)\.(\d+)\.(\d+)\b/g)) {
      const v = m[0];
      if (images.includes(v)) continue;
      // a cluster version ("3.5.0") of a line we ship
      if (m[3] === '0' && images.some((r) => minorOf(r) === `${m[1]}.${m[2]}`)) continue;
      if (NOT_OURS.test(line.slice(0, m.index))) continue;
      if (m[1] !== '3') continue; // not a release number of the 3.x lines (chart, Node, Kubernetes versions)
      out.push(`${relative(ROOT, file)}:${i + 1}: ${v}`);
    }
  }
  return out;
}

describe('docs: the releases they name have images', () => {
  it('build-images.sh builds exactly the server\'s supported releases', () => {
    expect(imageReleases()).to.deep.equal([...SUPPORTED_RELEASES]);
  });

  it('NOTES, the READMEs and docs/ name no svc release without an image', () => {
    const docs = join(ROOT, 'docs');
    const files = [
      join(ROOT, 'charts', 'svc-operator', 'templates', 'NOTES.txt'),
      join(ROOT, 'README.md'),
      join(ROOT, 'operator', 'README.md'),
      ...readdirSync(docs).filter((f) => f.endsWith('.md')).map((f) => join(docs, f)),
    ];
    const images = imageReleases();
    const found = files.flatMap((f) => strays(f, readFileSync(f, 'utf8'), images));
    expect(found, `releases with no image (images: ${images.join(', ')})`).to.deep.equal([]);
    // and the check sees one: the release NOTES once told users to upgrade to
    expect(strays('NOTES.txt', 'kubectl patch svcc example -p \'{"spec":{"version":"3.5.22"}}\'', images)).to.have.length(1);
  });
});
