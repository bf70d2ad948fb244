// Preloaded into every Node process the agent starts (NODE_OPTIONS=--import=<this file>): pod and service names
// resolve through the agent's hosts file, named by SVC_HOSTS_FILE.
import { installHostsLookup } from './hosts.js';

if (process.env.SVC_HOSTS_FILE) installHostsLookup(process.env.SVC_HOSTS_FILE);
