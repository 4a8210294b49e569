// SPDX-License-Identifier: GPL-2.0
// A module that does not compile: its cells are build-failed with the compiler's line.
#include <linux/module.h>

static int __init broken_init(void)
{
	return undeclared_value;
}

module_init(broken_init);
MODULE_LICENSE("GPL");
