// Publishing: the member's name and client URLs go through the log once it has a leader (the reference's
// publish), retried until they commit. A member counts as started once published.
import { idHex } from '../cluster/ids.js';
import { attributesPath, type Membership } from '../cluster/membership.js';
import type { Logger } from '../log/logger.js';
import { Errors } from './errors.js';
import type { Proposals } from './interfaces.js';
import { sleep, type Lifecycle } from './lifecycle.js';

export interface PublisherDeps {
  memberId: bigint;
  clusterId: bigint;
  name: string;
  clientURLs: string[];
  logger: Logger;
  lifecycle: Lifecycle;
  lead(): bigint;
  membership(): Membership;
  proposals: Proposals;
}

export class Publisher {
  private published = false;

  constructor(private readonly d: PublisherDeps) {}

  isPublished(): boolean {
    return this.published;
  }

  private get ending(): boolean {
    return this.d.lifecycle.stopped || this.d.lifecycle.stopping;
  }

  /** Publish, retrying until it commits or the member stops. */
  async run(): Promise<void> {
    const { d } = this;
    while (!this.ending && !this.published) {
      if (d.lead() === 0n || !d.membership().member(d.memberId)) {
        await sleep(100);
        continue;
      }
      const attrs = { name: d.name, clientURLs: d.clientURLs };
      try {
        await d.proposals.propose({ id: d.proposals.nextRequestId(), kind: 'memberAttrSet', memberAttrSet: { memberId: d.memberId, ...attrs } }, 5000);
        this.published = true;
        d.logger.info('published local member to cluster through raft', {
          'local-member-id': idHex(d.memberId),
          'local-member-attributes': `{Name:${attrs.name} ClientURLs:[${attrs.clientURLs.join(' ')}]}`,
          'request-path': attributesPath(d.memberId),
          'cluster-id': idHex(d.clusterId),
          'publish-timeout': '5s',
        });
      } catch (e) {
        if (!this.ending) d.logger.warn('failed to publish local member to cluster through raft', { 'local-member-id': idHex(d.memberId), 'request-path': attributesPath(d.memberId), error: (e as Error).message });
        await sleep(500);
      }
    }
  }

  /** Resolves once this member is published to the cluster (the reference's ReadyNotify); rejects if it stops first. */
  async readyNotify(): Promise<void> {
    while (!this.published) {
      if (this.ending) throw Errors.stopped();
      await sleep(20);
    }
  }
}
