// HUB_TEST_VHOST lets two checkouts of the tree run their tests at once without purging each other's queues.
exports.TEST_VHOST = process.env.HUB_TEST_VHOST || 'hub-test';
