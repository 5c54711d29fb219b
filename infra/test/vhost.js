// HUB_TEST_VHOST lets two checkouts of the tree run their tests at once without purging each other's queues.
exports.TEST_VHOST = process.env.HUB_TEST_VHOST || 'hub-test';
/** The tests' broker: the test virtual host on the machine's RabbitMQ. */
exports.TEST_RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:5672/${exports.TEST_VHOST}`;
