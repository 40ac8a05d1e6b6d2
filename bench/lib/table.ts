/** Prints a markdown table under a `## title` heading: the form every benchmark reports in. */
export function printMarkdownTable(
  title: string,
  columns: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): void {
  console.log(`\n## ${title}`);
  console.log(`| ${columns.join(' | ')} |`);
  console.log(`|${columns.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}
