/** A numbered schema change; statements run in order inside one transaction. */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}
