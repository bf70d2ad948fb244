// Flags of get/del (shared with txn request lines) turned into client options.
import type { DeleteOptions, GetOptions, SortOrder, SortTarget } from '../../client/types.js';
import { CliError, Exit } from './errors.js';
import { flagBool, flagInt, flagStr, type Parsed } from './flags.js';

/** get's flags; args = [key, range_end?]. */
export function getOptions(p: Parsed, args: string[]): GetOptions {
  const o: GetOptions = {};
  const prefix = flagBool(p, 'prefix');
  const fromKey = flagBool(p, 'from-key');
  if (prefix && fromKey) throw new CliError('`--prefix` and `--from-key` cannot be set at the same time, choose one', Exit.BadArgs);
  if (args.length > 1) {
    if (prefix || fromKey) throw new CliError('too many arguments, only accept one argument when `--prefix` or `--from-key` is set', Exit.BadArgs);
    o.rangeEnd = args[1];
  }
  o.prefix = prefix;
  o.fromKey = fromKey;
  const consistency = flagStr(p, 'consistency', 'l');
  if (consistency === 's') o.serializable = true;
  else if (consistency !== 'l') throw new CliError(`unknown consistency flag "${consistency}"`, Exit.BadArgs);
  o.limit = flagInt(p, 'limit');
  o.revision = flagInt(p, 'rev');
  o.keysOnly = flagBool(p, 'keys-only');
  o.countOnly = flagBool(p, 'count-only');
  const order = flagStr(p, 'order').toUpperCase();
  let sortOrder: SortOrder = 'NONE';
  if (order === 'ASCEND' || order === 'DESCEND') sortOrder = order;
  else if (order !== '') throw new CliError(`bad sort order: ${order}`, Exit.BadArgs);
  const by = flagStr(p, 'sort-by').toUpperCase();
  const targets: Record<string, SortTarget> = { CREATE: 'CREATE', KEY: 'KEY', MODIFY: 'MOD', VALUE: 'VALUE', VERSION: 'VERSION' };
  let sortTarget: SortTarget = 'KEY';
  if (by !== '') {
    if (!(by in targets)) throw new CliError(`bad sort target: ${by}`, Exit.BadArgs);
    sortTarget = targets[by];
  }
  // The reference sends ascending-by-key as "no sort": keys already come in that order.
  if (sortTarget === 'KEY' && sortOrder === 'ASCEND') sortOrder = 'NONE';
  if (by !== '' && order === '') sortOrder = sortTarget === 'KEY' ? 'NONE' : 'ASCEND';
  o.sortOrder = sortOrder;
  o.sortTarget = sortTarget;
  return o;
}

/** del's flags; args = [key, range_end?]. */
export function deleteOptions(p: Parsed, args: string[]): DeleteOptions {
  const prefix = flagBool(p, 'prefix');
  const fromKey = flagBool(p, 'from-key');
  if (prefix && fromKey) throw new CliError('`--prefix` and `--from-key` cannot be set at the same time, choose one', Exit.BadArgs);
  const o: DeleteOptions = { prefix, fromKey, prevKv: flagBool(p, 'prev-kv') };
  if (args.length > 1) {
    if (prefix || fromKey) throw new CliError('too many arguments, only accept one argument when `--prefix` or `--from-key` is set', Exit.BadArgs);
    o.rangeEnd = args[1];
  }
  return o;
}
