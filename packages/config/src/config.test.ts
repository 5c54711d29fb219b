import { z } from 'zod';
import { booleanFromEnv, durationListFromEnv, loadConfig, parseDuration, portFromEnv } from './index';

describe('loadConfig', () => {
  const schema = z.object({
    PORT: portFromEnv(8080),
    FLAG: booleanFromEnv(true),
    DELAYS: durationListFromEnv('5s,2m'),
  });

  it('When nothing is set, then the defaults apply', () => {
    expect(loadConfig(schema, {})).toEqual({ PORT: 8080, FLAG: true, DELAYS: [5000, 120000] });
  });

  it('When a boolean says "false", then it is false', () => {
    expect(loadConfig(schema, { FLAG: 'false' }).FLAG).toBe(false);
  });

  it('When a variable is wrong, then the error names it', () => {
    expect(() => loadConfig(schema, { PORT: 'abc', FLAG: 'yes' })).toThrow(/PORT[\s\S]*FLAG/);
  });

  it('When a duration list has a bad item, then it fails', () => {
    expect(() => loadConfig(schema, { DELAYS: '5s,soon' })).toThrow(/DELAYS.*soon/);
  });

  it('When the config is loaded, then it is frozen', () => {
    expect(Object.isFrozen(loadConfig(schema, {}))).toBe(true);
  });

  it('parses every duration unit', () => {
    expect(['200ms', '5s', '2m', '1h', '1d'].map(parseDuration)).toEqual([200, 5000, 120000, 3600000, 86400000]);
  });
});
