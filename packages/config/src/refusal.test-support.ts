import { ConfigError } from './index';

/**
 * The refusal of a configuration, for tests that read its message (which variables it names):
 * the ConfigError that `load` throws. Fails the test when `load` accepts the configuration or
 * throws anything else.
 */
export function configRefusal(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw new Error(
      `expected a ConfigError, got ${error instanceof Error ? `${error.name}: ${error.message}` : error}`,
    );
  }
  throw new Error('expected the configuration to be refused, it was accepted');
}

/** The variables a refusal names as required, in its `  NAME: required when HUB_AMBIENTE is X` lines. */
export const requiredIn = (refusal: ConfigError): string[] =>
  [...refusal.message.matchAll(/^ {2}(\w+): required when HUB_AMBIENTE/gm)].map((m) => m[1]!).sort();
