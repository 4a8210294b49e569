// SPDX-License-Identifier: GPL-2.0
// The smallest module workload: prints one known metric and an error line, then stays
// loaded until rig's agent removes it.
#include <linux/init.h>
#include <linux/module.h>

static int answer = 42;
module_param(answer, int, 0444);

static int __init metric_init(void)
{
	pr_info("rig-metric test.answer %d units\n", answer);
	pr_err("rig_test_metric: an error line for rig to count\n");
	return 0;
}

static void __exit metric_exit(void)
{
}

module_init(metric_init);
module_exit(metric_exit);
MODULE_LICENSE("GPL");
