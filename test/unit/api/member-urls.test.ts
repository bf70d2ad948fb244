// Member URLs as the reference accepts them in MemberAdd and MemberUpdate: http(s) with host:port and no
// path, unix(s) sockets of any form.
import { expect } from 'chai';
import { isMemberUrl } from '../../../server/api/v3/cluster.js';

describe('api/cluster: member URLs', () => {
  it('accepts http(s) host:port (the default port written out included) and every unix socket form', () => {
    for (const u of ['http://127.0.0.1:2380', 'https://etcd-0.svc:2380', 'http://[::1]:2380', 'http://a:80', ' http://a:1 ', 'unix://localhost:2380', 'unix:///run/a.sock', 'unixs://a.sock']) {
      expect(isMemberUrl(u), u).to.equal(true);
    }
  });

  it('refuses a missing port, a path, another scheme and what is no URL', () => {
    for (const u of ['http://127.0.0.1', 'http://a:1/', 'http://a:1/x', 'ftp://a:1', 'a:1', '', 'http://a:b']) {
      expect(isMemberUrl(u), u).to.equal(false);
    }
  });
});
