import { existsSync } from 'node:fs';
import path from 'node:path';
import type { loadConfig } from '@hub/config';

export const ROOT = path.resolve(__dirname, '../../..');

/**
 * The zod schema of a service's configuration (services/<name>/src/config.ts), when the service has
 * one. A deployable service's schema extends baseConfig (it has HUB_AMBIENTE); `qualquer` also
 * takes the demo receiver's, which picks only LOG_LEVEL from it.
 */
export function configSchemaOf(service: string, qualquer = false) {
  const file = path.join(ROOT, 'services', service, 'src', 'config.ts');
  if (!existsSync(file)) return undefined;
  const schemas = Object.values(require(file) as Record<string, unknown>).filter(
    (value): value is { safeParse: unknown; shape: Record<string, unknown> } =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { safeParse?: unknown }).safeParse === 'function' &&
      'shape' in value &&
      (qualquer || 'HUB_AMBIENTE' in (value as { shape: object }).shape),
  );
  if (schemas.length !== 1) throw new Error(`${file} should export one configuration schema, found ${schemas.length}`);
  return schemas[0] as unknown as Parameters<typeof loadConfig>[0] & { shape: Record<string, unknown> };
}
