/** The modules a TypeScript file names in import/export/require/jest.mock: a reading, not a compiler's. */
const IMPORT = [
  /\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\b(?:import|require|jest\.mock)\(\s*['"]([^'"]+)['"]/g,
];

export function importsOf(text: string): string[] {
  return IMPORT.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!));
}
