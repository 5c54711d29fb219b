export { type DeliveryWorkerConfig, deliveryWorkerConfig, readConfig } from './config';
export { type RunningDeliveryWorker, type StartOptions, startDeliveryWorker } from './start';
