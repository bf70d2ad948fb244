// One configured value before conversion, with where it came from (for error messages).
import type { Origin } from './values.js';

export interface Setting {
  /** Flag text, or a YAML value (string, number, boolean, list). */
  raw: unknown;
  origin: Origin;
}
