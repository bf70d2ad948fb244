// spec.backup.schedule and timeZone as croner reads them: validation refuses what croner cannot use, and the
// backup rules (backup/schedule.ts) compute run times with the same reading.
import { Cron } from 'croner';

/** A cron that only computes run times (no function given: croner schedules nothing). */
export function cron(schedule: string, timeZone: string | undefined): Cron {
  return new Cron(schedule, { timezone: timeZone ?? 'UTC', paused: true });
}

/** Why a schedule and time zone cannot be used (`at` names their block: spec.backup), or undefined when they can. */
export function scheduleProblem(schedule: string, timeZone?: string, at = 'spec.backup'): string | undefined {
  try {
    const next = cron(schedule, timeZone).nextRun(new Date(0));
    if (!next) return `${at}.schedule "${schedule}" never fires`;
    return undefined;
  } catch (e) {
    const why = (e as Error).message.replace(/^(CronPattern|CronDate|TypeError): /, '');
    return timeZone !== undefined && /timezone/i.test(why)
      ? `${at}.timeZone "${timeZone}" is not an IANA time zone (e.g. Europe/Berlin)`
      : `${at}.schedule "${schedule}" is not a cron expression (minute hour day-of-month month day-of-week): ${why}`;
  }
}
