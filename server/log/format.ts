// The two line formats: zap-style JSON (keys level, ts, caller, msg, then fields) and capnslog-style
// text ("2026-11-21 17:00:00.123456 I | etcdserver: msg key=value"). Both carry the same msg text.
import type { LogFields, LogLevel } from './logger.js';
import { CAPNSLOG_LETTER, ZAP_LEVEL_NAME } from './levels.js';
import { fieldJson, fieldText } from './fields.js';

const pad2 = (n: number): string => (n < 10 ? '0' : '') + n;
const pad3 = (n: number): string => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

// Formatting the date part once per second keeps the per-record cost to a few string concatenations.
let cachedSecond = -1;
let cachedDate = '';
let cachedTime = '';
let cachedZone = '';

function refresh(sec: number): void {
  const d = new Date(sec * 1000);
  cachedSecond = sec;
  cachedDate = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
  cachedTime = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  const off = -d.getTimezoneOffset();
  cachedZone = off === 0 ? 'Z' : `${off > 0 ? '+' : '-'}${pad2(Math.floor(Math.abs(off) / 60))}${pad2(Math.abs(off) % 60)}`;
}

/** zap's ISO-8601 timestamp in local time with milliseconds and zone: 2026-11-21T17:00:00.123Z or ...+0200. */
export function zapTimestamp(epochMs: number): string {
  const sec = Math.floor(epochMs / 1000);
  if (sec !== cachedSecond) refresh(sec);
  return `${cachedDate}T${cachedTime}.${pad3(Math.floor(epochMs - sec * 1000))}${cachedZone}`;
}

/** capnslog's timestamp in local time with microseconds: 2026-11-21 17:00:00.123456. */
export function capnslogTimestamp(epochMs: number): string {
  const sec = Math.floor(epochMs / 1000);
  if (sec !== cachedSecond) refresh(sec);
  const micros = Math.min(999_999, Math.floor((epochMs - sec * 1000) * 1000));
  return `${cachedDate} ${cachedTime}.${String(micros).padStart(6, '0')}`;
}

/** One zap JSON line (without the newline). `base` is pre-rendered ',"k":v' text of child fields. */
export function zapLine(level: LogLevel, epochMs: number, caller: string | undefined, msg: string, base: string, fields: LogFields | undefined): string {
  let s = `{"level":"${ZAP_LEVEL_NAME[level]}","ts":"${zapTimestamp(epochMs)}"`;
  if (caller !== undefined) s += `,"caller":${JSON.stringify(caller)}`;
  s += `,"msg":${JSON.stringify(msg)}${base}`;
  if (fields !== undefined) s += zapFields(fields);
  return s + '}';
}

/** ',"k":v' text of fields, in insertion order; undefined values are left out. */
/** zap's console encoding: time, level, caller and message tab-separated, then the fields as one JSON object. */
export function zapConsoleLine(level: LogLevel, epochMs: number, caller: string | undefined, msg: string, base: string, fields: LogFields | undefined): string {
  const parts = [zapTimestamp(epochMs), ZAP_LEVEL_NAME[level], ...(caller !== undefined ? [caller] : []), msg];
  const rest = base + (fields !== undefined ? zapFields(fields) : '');
  if (rest !== '') parts.push(`{${rest.slice(1)}}`);
  return parts.join('\t');
}

export function zapFields(fields: LogFields): string {
  let s = '';
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined) continue;
    s += `,${JSON.stringify(k)}:${fieldJson(k, v)}`;
  }
  return s;
}

/** One capnslog text line (without the newline). `base` is pre-rendered ' k=v' text of child fields. */
export function capnslogLine(level: LogLevel, epochMs: number, pkg: string, msg: string, base: string, fields: LogFields | undefined): string {
  let s = `${capnslogTimestamp(epochMs)} ${CAPNSLOG_LETTER[level]} | ${pkg === '' ? '' : pkg + ': '}${msg}${base}`;
  if (fields !== undefined) s += textFields(fields);
  return s;
}

/** ' k=v' text of fields, in insertion order; undefined values are left out. */
export function textFields(fields: LogFields): string {
  let s = '';
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined) continue;
    s += ` ${k}=${fieldText(k, v)}`;
  }
  return s;
}
