// Passwords are stored as the reference stores them (bcrypt, "$2a$"): known answers (OpenBSD's vector and a hash
// the reference 3.4.23 wrote for a user) check, and our own hashes carry the reference's prefix and cost.
import { expect } from 'chai';
import { hashPassword, passwordMatches } from '../../../server/auth/store.js';

describe('auth: bcrypt password hashes', function () {
  this.timeout(20000);

  it('checks hashes others wrote: the OpenBSD test vector and one the reference wrote', async () => {
    const vector = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';
    expect(await passwordMatches(vector, 'U*U')).to.equal(true);
    expect(await passwordMatches(vector, 'U*V')).to.equal(false);
    // `etcdctl user add carol --new-user-password='s3cr3t pässword'` on etcd 3.4.23, read from its snapshot
    const ref = '$2a$10$E6lcoD9Rhu5ZWu1RwGlnBezvKoKqf2DSAQVbb8SwfbzjBHG4zmIhO';
    expect(await passwordMatches(ref, 's3cr3t pässword')).to.equal(true);
    expect(await passwordMatches(ref, 's3cr3t password')).to.equal(false);
  });

  it('hashes as the reference does ($2a$, cost 10 unless --bcrypt-cost says otherwise) and checks its own hashes', async () => {
    expect(await hashPassword('x')).to.match(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
    const h = await hashPassword('pw', 4);
    expect(h).to.match(/^\$2a\$04\$/);
    expect(await passwordMatches(h, 'pw')).to.equal(true);
    expect(await passwordMatches(h, 'pw2')).to.equal(false);
    expect(await passwordMatches('not a hash', 'x')).to.equal(false);
  });
});
