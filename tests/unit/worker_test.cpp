// SPDX-License-Identifier: MIT
// Tests of run/worker: a job file and a record survive their round trip whole, and
// files that are not whole are refused.
#include "full_records.hpp"
#include "run/worker.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <gtest/gtest.h>

using namespace rig;
namespace fs = std::filesystem;

using test::full_sample;

TEST(worker, a_record_keeps_every_field) {
    test::TempDir dir;
    core::Sample sample = full_sample();
    ASSERT_TRUE(run::write_record(dir.path() / "r.json", sample, "node-1"));
    auto back = run::read_record(dir.path() / "r.json");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->cell_id, sample.cell_id);
    EXPECT_EQ(back->repetition, 2);
    EXPECT_EQ(back->outcome, core::Outcome::errors);
    EXPECT_EQ(back->accel, "tcg");
    EXPECT_EQ(back->kernel_artifact, sample.kernel_artifact);
    EXPECT_EQ(back->guest_seconds, 1.25);
    EXPECT_EQ(back->wall_seconds, 1.5);
    EXPECT_EQ(back->total_seconds, 20.125);
    EXPECT_EQ(back->qemu_cpu_seconds, 3.5);
    EXPECT_EQ(back->helper_cpu_seconds, 0.25);
    EXPECT_EQ(back->host_cpu_seconds, 4);
    EXPECT_EQ(back->host_cpu_percent, 50.5);
    EXPECT_EQ(back->mount_requested, sample.mount_requested);
    EXPECT_EQ(back->mount_negotiated, sample.mount_negotiated);
    EXPECT_EQ(back->msize_negotiated, 512000u);
    EXPECT_EQ(back->cache_negotiated, "loose");
    EXPECT_EQ(back->exit_status, 3);
    EXPECT_EQ(back->error_count, 4);
    EXPECT_EQ(back->warning_count, 5);
    EXPECT_EQ(back->evidence, sample.evidence);
    EXPECT_EQ(back->started_at, sample.started_at);
    ASSERT_EQ(back->lines.size(), 2u);
    EXPECT_EQ(back->lines[0].severity, core::Severity::error);
    EXPECT_EQ(back->lines[1].severity, core::Severity::warning);
    EXPECT_EQ(back->lines[0].signature, "a.c:N: error: x");
    EXPECT_EQ(back->lines[1].source, "console");
    ASSERT_EQ(back->metrics.size(), 2u);
    EXPECT_EQ(back->metrics[0].name, "9p.work.getattr");
    EXPECT_EQ(back->metrics[0].value, 1234);
    EXPECT_EQ(back->metrics[1].unit, "s");
    // virtiofs cells have no msize: absent stays absent.
    sample.msize_negotiated.reset();
    ASSERT_TRUE(run::write_record(dir.path() / "r.json", sample, "node-1"));
    EXPECT_FALSE(run::read_record(dir.path() / "r.json")->msize_negotiated);
    // Written by rename: no temporary is left beside it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(worker, a_record_round_trips_every_field_of_the_list) {
    test::TempDir dir;
    const core::Sample sample = full_sample();
    EXPECT_EQ(test::fields_left_default(sample), "") << "full_sample must set every field";
    EXPECT_EQ(test::fields_left_default(sample.lines[1]), "") << "the warning line";
    EXPECT_EQ(test::fields_left_default(sample.metrics[0]), "");
    ASSERT_TRUE(run::write_record(dir.path() / "r.json", sample, "node-1"));
    auto back = run::read_record(dir.path() / "r.json");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_TRUE(*back == sample);
}

TEST(worker, a_record_written_before_cpus_reads) {
    // As a format-1 worker wrote it before samples had CPUs.
    test::TempDir dir;
    std::ofstream(dir.path() / "old.json") << R"({
 "format": 1, "node": "n", "cell_id": "0123456789ab", "repetition": 1, "outcome": "ok",
 "accel": "kvm", "kernel_artifact": "k", "guest_seconds": 1.5, "wall_seconds": 2,
 "total_seconds": 9, "qemu_cpu_seconds": 1, "helper_cpu_seconds": 0.5,
 "host_cpu_seconds": 2, "host_cpu_percent": 25, "mount_requested": "r",
 "mount_negotiated": "n", "msize_negotiated": null, "cache_negotiated": "",
 "exit_status": 0, "error_count": 1, "warning_count": 0, "evidence": "e",
 "started_at": "2025-01-01T00:00:00Z",
 "lines": [{"severity": "error", "source": "dmesg", "line": "BUG", "signature": "BUG"}],
 "metrics": [{"name": "noop/seconds", "value": 0.25, "unit": "s"}]})";
    auto back = run::read_record(dir.path() / "old.json");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->outcome, core::Outcome::ok);
    EXPECT_EQ(back->cpus, "");
    EXPECT_EQ(back->machine, "");
    EXPECT_FALSE(back->msize_negotiated);
    EXPECT_EQ(back->guest_seconds, 1.5);
    ASSERT_EQ(back->lines.size(), 1u);
    EXPECT_EQ(back->lines[0].source, "dmesg");
    ASSERT_EQ(back->metrics.size(), 1u);
    EXPECT_EQ(back->metrics[0].value, 0.25);
}

TEST(worker, a_job_file_keeps_its_cell_and_paths) {
    test::TempDir dir;
    run::SampleJob job;
    job.cell.cell.id = "0123456789ab";
    job.cell.cell.kernel_name = "deb-6.1";
    job.cell.cell.config = "debian";
    job.cell.cell.params = {{"fs", "9p"}, {"cache", "loose"}};
    job.cell.cell.canonical = "canonical text";
    job.cell.workload.command = "make -j2";
    job.cell.guest.memory_mib = 512;
    job.cell.timeouts.boot = std::chrono::milliseconds(1234);
    job.repetition = 1;
    job.kernel_id = "k";
    job.boot_image = "/shared/kernels/k/vmlinux";
    job.base_initrd = "/shared/kernels/k/base.cpio";
    job.dir = "/shared/runs/1/c/1";
    job.hypervisor = core::Backend::libvirt;
    job.uri = "qemu:///system";
    job.attempt = 2;
    job.record = "/shared/runs/1/jobs/3.2.record.json";
    ASSERT_TRUE(run::write_job(dir.path() / "3.json", job));
    auto back = run::read_job(dir.path() / "3.json");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->cell.cell.id, job.cell.cell.id);
    EXPECT_EQ(back->cell.cell.params, job.cell.cell.params);
    EXPECT_EQ(back->cell.cell.fs().name, "9p");
    EXPECT_EQ(back->cell.cell.cache(), "loose");
    // The workload, guest shape and timeouts travel with the cell: no scenario is read.
    EXPECT_EQ(back->cell.workload.command, "make -j2");
    EXPECT_EQ(back->cell.guest.memory_mib, 512u);
    EXPECT_EQ(back->cell.timeouts.boot, std::chrono::milliseconds(1234));
    EXPECT_EQ(back->repetition, 1);
    EXPECT_EQ(back->boot_image, job.boot_image);
    EXPECT_EQ(back->hypervisor, core::Backend::libvirt);
    EXPECT_EQ(back->attempt, 2);
    EXPECT_EQ(back->record, job.record);
}

TEST(worker, files_that_are_not_whole_are_refused) {
    test::TempDir dir;
    std::ofstream(dir.path() / "half.json") << "{\"format\": 1, \"cell_id\": \"ab";
    std::ofstream(dir.path() / "other.json") << "{\"format\": 99}";
    std::ofstream(dir.path() / "fields.json") << "{\"format\": 1, \"cell_id\": \"ab\"}";
    EXPECT_FALSE(run::read_record(dir.path() / "half.json"));
    EXPECT_FALSE(run::read_record(dir.path() / "missing.json"));
    auto other = run::read_record(dir.path() / "other.json");
    ASSERT_FALSE(other);
    EXPECT_NE(other.error().message.find("format 99"), std::string::npos);
    auto fields = run::read_record(dir.path() / "fields.json");
    ASSERT_FALSE(fields);
    EXPECT_NE(fields.error().message.find("not a whole record"), std::string::npos);
    auto job = run::read_job(dir.path() / "fields.json");
    ASSERT_FALSE(job);
    EXPECT_EQ(job.error().kind, rig::ErrorKind::usage);
}
