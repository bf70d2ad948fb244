// bcrypt as the reference stores passwords: known answers (OpenBSD's vector and a hash the reference 3.4.23
// wrote for a user), and our own hashes check.
import { expect } from 'chai';
import { bcryptCheck, bcryptHash, isBcrypt } from '../../../server/auth/bcrypt.js';

describe('auth: bcrypt password hashes', () => {
  it('checks known hashes: the OpenBSD test vector and one the reference wrote', () => {
    expect(bcryptCheck('$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*U')).to.equal(true);
    expect(bcryptCheck('$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*V')).to.equal(false);
    // `etcdctl user add carol --new-user-password='s3cr3t pässword'` on etcd 3.4.23, read from its snapshot
    const ref = '$2a$10$E6lcoD9Rhu5ZWu1RwGlnBezvKoKqf2DSAQVbb8SwfbzjBHG4zmIhO';
    expect(bcryptCheck(ref, 's3cr3t pässword')).to.equal(true);
    expect(bcryptCheck(ref, 's3cr3t password')).to.equal(false);
  });

  it('hashes as the reference does ($2a$, cost 10) and checks its own hashes', () => {
    const h = bcryptHash('pw', 4);
    expect(isBcrypt(h)).to.equal(true);
    expect(h).to.match(/^\$2a\$04\$/);
    expect(bcryptCheck(h, 'pw')).to.equal(true);
    expect(bcryptCheck(h, 'pw2')).to.equal(false);
    expect(bcryptHash('x')).to.match(/^\$2a\$10\$/);
    // the same salt gives the same hash; the password is cut at 72 bytes, as bcrypt does
    const salt = Buffer.alloc(16, 7);
    expect(bcryptHash('a'.repeat(72), 4, salt)).to.equal(bcryptHash('a'.repeat(80), 4, salt));
    expect(bcryptCheck('not a hash', 'x')).to.equal(false);
  });
});
