// Runs in every test worker before the tests: the broker of the tests is the test virtual host.
const { TEST_VHOST } = require('./vhost');

process.env.RABBITMQ_URL ??= `amqp://guest:guest@127.0.0.1:5672/${TEST_VHOST}`;
