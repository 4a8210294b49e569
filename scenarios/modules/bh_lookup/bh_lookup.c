// SPDX-License-Identifier: GPL-2.0
// bh_lookup: times __find_get_block on the scratch disk, with the per-CPU buffer_head
// LRU warm (one block, looked up again and again) and defeated (a cycle over more blocks
// than the LRU holds, BH_LRU_SIZE = 16), and prints ns per lookup as rig-metric lines.
#include <linux/blkdev.h>
#include <linux/buffer_head.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/version.h>

static char *device = "/dev/rig-scratch";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "block device to read (the scratch disk)");

static unsigned int loops = 200000;
module_param(loops, uint, 0444);
MODULE_PARM_DESC(loops, "lookups per measurement");

static unsigned int blocks = 64;
module_param(blocks, uint, 0444);
MODULE_PARM_DESC(blocks, "blocks cycled over to defeat the LRU (more than 16)");

/* The block-device open API: 6.1 has blkdev_get_by_path with an fmode_t; 6.5 gave it a
 * blk_mode_t and holder ops; 6.9 replaced it by bdev_file_open_by_path. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
static struct file *opened;
static struct block_device *open_device(void)
{
	opened = bdev_file_open_by_path(device, BLK_OPEN_READ, NULL, NULL);
	return IS_ERR(opened) ? ERR_CAST(opened) : file_bdev(opened);
}
static void close_device(struct block_device *bdev)
{
	fput(opened);
}
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
static struct block_device *open_device(void)
{
	return blkdev_get_by_path(device, BLK_OPEN_READ, NULL, NULL);
}
static void close_device(struct block_device *bdev)
{
	blkdev_put(bdev, NULL);
}
#else
static struct block_device *open_device(void)
{
	return blkdev_get_by_path(device, FMODE_READ, NULL);
}
static void close_device(struct block_device *bdev)
{
	blkdev_put(bdev, FMODE_READ);
}
#endif

/* ns per lookup with three decimals, as rig-metric NAME VALUE ns. */
static void report(const char *name, u64 ns)
{
	u64 milli = div_u64(ns * 1000, loops);

	pr_info("rig-metric %s %llu.%03llu ns\n", name, div_u64(milli, 1000), milli % 1000);
}

/* Times `loops` lookups of block (i % span); the cpu stays put so the per-CPU LRU is
 * the one that was filled. Returns the elapsed ns, or 0 when a block was not found. */
static u64 time_lookups(struct block_device *bdev, unsigned int size, unsigned int span)
{
	unsigned int i, missing = 0;
	u64 start, end;

	get_cpu();
	start = ktime_get_ns();
	for (i = 0; i < loops; i++) {
		struct buffer_head *bh = __find_get_block(bdev, i % span, size);

		if (bh)
			brelse(bh);
		else
			missing++;
	}
	end = ktime_get_ns();
	put_cpu();
	if (missing) {
		pr_err("bh_lookup: %u of %u lookups found no buffer\n", missing, loops);
		return 0;
	}
	return end - start;
}

static int __init bh_lookup_init(void)
{
	struct block_device *bdev;
	unsigned int size, i;
	u64 warm, defeated;
	int ret = 0;

	if (loops == 0 || blocks <= 16) {
		pr_err("bh_lookup: loops must be > 0 and blocks > 16 (BH_LRU_SIZE)\n");
		return -EINVAL;
	}
	bdev = open_device();
	if (IS_ERR(bdev)) {
		pr_err("bh_lookup: cannot open %s: %ld\n", device, PTR_ERR(bdev));
		return PTR_ERR(bdev);
	}
	size = block_size(bdev);
	/* Read every block once, so that each lookup finds its buffer in the page cache. */
	for (i = 0; i < blocks; i++) {
		struct buffer_head *bh = __bread(bdev, i, size);

		if (!bh) {
			pr_err("bh_lookup: cannot read block %u of %s\n", i, device);
			ret = -EIO;
			goto out;
		}
		brelse(bh);
	}
	pr_info("rig-metric bh.block_size %u bytes\n", size);
	warm = time_lookups(bdev, size, 1);
	defeated = time_lookups(bdev, size, blocks);
	if (!warm || !defeated) {
		ret = -EIO;
		goto out;
	}
	report("bh.lru_warm_ns", warm);
	report("bh.lru_defeated_ns", defeated);
out:
	close_device(bdev);
	return ret;
}

static void __exit bh_lookup_exit(void)
{
}

module_init(bh_lookup_init);
module_exit(bh_lookup_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("buffer_head lookup microbenchmark for rig");
