// SPDX-License-Identifier: GPL-2.0
// A module whose init hits BUG(): the guest must end at once as kernel-panic, with the
// oops as evidence, rather than wait for the workload timeout.
#include <linux/bug.h>
#include <linux/module.h>

static int __init bug_init(void)
{
	pr_info("rig_test_bug: about to BUG\n");
	BUG();
	return 0;
}

module_init(bug_init);
MODULE_LICENSE("GPL");
