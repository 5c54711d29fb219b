// Runs in every test worker before the tests: the broker of the tests is the test virtual host.
const { TEST_RABBITMQ_URL } = require('./vhost');

// Unset would be PRODUCTION (destination safety on, no development defaults): tests run as a developer does.
process.env.HUB_AMBIENTE ??= 'LOCALHOST';
process.env.RABBITMQ_URL ??= TEST_RABBITMQ_URL;
