import type pg from 'pg';

/** What PostgreSQL says of a statement it has parsed: its parameters' and its columns' type oids. */
export interface Description {
  parameters: number[];
  fields: { name: string; dataTypeID: number }[];
}

interface Connection {
  parse(query: { name: string; text: string; types: number[] }): void;
  describe(message: { type: 'S'; name: string }): void;
  sync(): void;
  on(event: 'parameterDescription', listener: (message: { dataTypeIDs: number[] }) => void): void;
  removeListener(event: 'parameterDescription', listener: (message: { dataTypeIDs: number[] }) => void): void;
}

/**
 * Parses `text` as an unnamed statement and describes it (Parse, Describe, Sync of the extended
 * protocol), without running it: a statement that cannot run with NULL for every parameter (an
 * insert of a NOT NULL column) is described all the same. A custom query of node-postgres (its
 * `submit` interface, as pg-cursor's).
 */
export function describe(client: pg.Client, text: string): Promise<Description> {
  return new Promise((resolve, reject) => {
    const found: Description = { parameters: [], fields: [] };
    let failure: Error | undefined;
    let connection: Connection | undefined;
    const onParameters = (message: { dataTypeIDs: number[] }) => {
      found.parameters = [...message.dataTypeIDs];
    };
    const query = {
      submit(c: Connection) {
        connection = c;
        c.on('parameterDescription', onParameters);
        c.parse({ name: '', text, types: [] });
        c.describe({ type: 'S', name: '' });
        c.sync();
      },
      handleParseComplete() {},
      handleRowDescription(message: Description) {
        found.fields = message.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
      },
      handleDataRow() {},
      handlePortalSuspended() {},
      handleCommandComplete() {},
      handleEmptyQuery() {},
      handleError(error: Error) {
        failure = error;
        connection?.removeListener('parameterDescription', onParameters);
        reject(error);
      },
      handleReadyForQuery() {
        connection?.removeListener('parameterDescription', onParameters);
        if (!failure) resolve(found);
      },
    };
    client.query(query as unknown as pg.QueryConfig);
  });
}
