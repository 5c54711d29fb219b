import {
  type Broker,
  DEFAULT_RETRY_DELAYS_MS,
  DELIVERY_CONSUMER_RETRY,
  DELIVERY_RETRY_DELAYS_MS,
  migrateOldLadders,
  OLD_CONSUMER_LADDERS,
} from '@hub/broker';
import { durationListFromEnv } from '@hub/config';
import type { Logger } from '@hub/log';
import type { DeliveryTopology } from './index';

/** A duration as the settings write it (`5s`, `2m`, `4h`; `1500ms` when no larger unit divides it). */
function durationText(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/**
 * DELIVERY_RETRY_DELAYS, as hub-api and the delivery worker both read it (one field, so one row of
 * docs/configuration.md): the steps of a delivery's retries, DELIVERY_RETRY_DELAYS_MS unless set.
 */
export const deliveryRetryDelaysFromEnv = () =>
  durationListFromEnv(DELIVERY_RETRY_DELAYS_MS.map(durationText).join(','))
    .refine((steps) => steps.length > 0 && steps.every((ms) => ms > 0), 'every retry delay must be above 0')
    .describe(
      "delay before the 2nd, 3rd… attempt of a delivery; the last one repeats (one queue of the retry ladder hub.atraso each, which hub-api's GET /fila lists)",
    );

/**
 * Drains the old ladders into the one retry ladder and removes them (`migrateOldLadders`): the
 * delivery jobs' of `topologia`, for the steps of DELIVERY_RETRY_DELAYS (`passosMs`) and its
 * default, and the consumers' `hub.novas-tentativas*`, for the steps their policies name.
 */
export function migrarEscadasAntigas(
  broker: Broker,
  topologia: DeliveryTopology,
  passosMs: readonly number[],
  logger: Logger,
): Promise<number> {
  const dosConsumidores = [...DEFAULT_RETRY_DELAYS_MS, ...DELIVERY_CONSUMER_RETRY.delaysMs];
  return migrateOldLadders(
    broker,
    [
      { ladder: topologia.escadaAntiga, stepsMs: [...passosMs, ...DELIVERY_RETRY_DELAYS_MS] },
      ...OLD_CONSUMER_LADDERS.map((ladder) => ({ ladder, stepsMs: dosConsumidores })),
    ],
    logger,
  );
}
