import { loadConfig } from '@hub/config';
import { deliveryWorkerConfig } from './config';

const local = { HUB_AMBIENTE: 'LOCALHOST' };

describe('Stop timeouts of the worker', () => {
  it('When nothing is set, then the drain of attempts (8 s) is below the hard limit of the stop (15 s)', () => {
    const config = loadConfig(deliveryWorkerConfig, local);
    expect(config.DELIVERY_STOP_TIMEOUT).toBe(8_000);
    expect(config.SHUTDOWN_TIMEOUT).toBe(15_000);
  });

  it('When DELIVERY_STOP_TIMEOUT reaches or passes SHUTDOWN_TIMEOUT, then the configuration is refused at start, naming both', () => {
    expect(() => loadConfig(deliveryWorkerConfig, { ...local, DELIVERY_STOP_TIMEOUT: '15s' })).toThrow(
      /DELIVERY_STOP_TIMEOUT: must be below SHUTDOWN_TIMEOUT/,
    );
    expect(() =>
      loadConfig(deliveryWorkerConfig, { ...local, DELIVERY_STOP_TIMEOUT: '40s', SHUTDOWN_TIMEOUT: '30s' }),
    ).toThrow(/DELIVERY_STOP_TIMEOUT: must be below SHUTDOWN_TIMEOUT \(30000 ms\)/);
  });

  it('When SHUTDOWN_TIMEOUT is raised, then a longer drain below it is accepted', () => {
    const config = loadConfig(deliveryWorkerConfig, {
      ...local,
      DELIVERY_STOP_TIMEOUT: '20s',
      SHUTDOWN_TIMEOUT: '25s',
    });
    expect([config.DELIVERY_STOP_TIMEOUT, config.SHUTDOWN_TIMEOUT]).toEqual([20_000, 25_000]);
  });
});

describe('Spacing of the record statements', () => {
  it('When nothing is set, then records start 20 ms apart at least; 0ms runs them back to back; past 1s is refused', () => {
    expect(loadConfig(deliveryWorkerConfig, local).DELIVERY_RECORD_SPACING).toBe(20);
    expect(loadConfig(deliveryWorkerConfig, { ...local, DELIVERY_RECORD_SPACING: '0ms' }).DELIVERY_RECORD_SPACING).toBe(
      0,
    );
    expect(() => loadConfig(deliveryWorkerConfig, { ...local, DELIVERY_RECORD_SPACING: '2s' })).toThrow(
      /DELIVERY_RECORD_SPACING: must be 1s at most/,
    );
  });
});
