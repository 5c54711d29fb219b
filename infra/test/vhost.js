exports.TEST_VHOST = 'hub-test';
