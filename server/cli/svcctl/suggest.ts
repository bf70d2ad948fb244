// The reference's (cobra's) answer to an unknown command: the error, "Did you mean this?" with commands within
// edit distance 2 or starting with what was typed, and the usage hint — then the error again, as its
// main prints it a second time.

function levenshtein(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length][b.length];
}

/** Commands close to `typed`, in `commands` order. */
export function suggestions(typed: string, commands: readonly string[]): string[] {
  const t = typed.toLowerCase();
  return commands.filter((c) => levenshtein(t, c.toLowerCase()) <= 2 || c.toLowerCase().startsWith(t));
}

/** The whole standard-error text for an unknown command. */
export function unknownCommandText(typed: string, program: string, commands: readonly string[]): string {
  const sugg = suggestions(typed, commands);
  let msg = `unknown command "${typed}" for "${program}"`;
  if (sugg.length > 0) msg += `\n\nDid you mean this?\n${sugg.map((s) => `\t${s}\n`).join('')}`;
  return `Error: ${msg}\nRun '${program} --help' for usage.\nError: ${msg}\n`;
}
