// unix:// and unixs:// URLs as the reference reads them: the socket is the file named by host + path, so
// "unix://localhost:12345" is the file "localhost:12345" in the working directory and "unix:///run/a.sock"
// is /run/a.sock. unixs is the TLS variant.

/** Whether the URL names a unix socket. */
export function isUnixUrl(u: URL): boolean {
  return u.protocol === 'unix:' || u.protocol === 'unixs:';
}

/** Whether the URL (http, https, unix or unixs) uses TLS. */
export function isSecureUrl(u: URL): boolean {
  return u.protocol === 'https:' || u.protocol === 'unixs:';
}

/** The socket file of a unix URL. */
export function unixSocketPath(u: URL): string {
  return u.host + (u.pathname === '/' ? '' : u.pathname);
}
