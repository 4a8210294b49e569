// SPDX-License-Identifier: MIT
// rig-fuse: the passthrough FUSE daemon of `fs: fuse` cells, and the FUSE cache invalidation
// benchmark. Runs inside the guest; the only rig source that includes libfuse.
//
//   rig-fuse [--entry-timeout S] [--attr-timeout S] [--negative-timeout S]
//            [--keep-cache] [--writeback-cache] [--direct-io] [--counts FILE]
//            --source DIR MOUNTPOINT
//   rig-fuse --bench-invalidate N[,N...] [--rounds R] --source DIR MOUNTPOINT
//
// The first form serves DIR at MOUNTPOINT until it is unmounted; with --counts, each
// SIGUSR1 writes the requests served so far, by opcode and by opcode and path class, to
// FILE (guests/README.md). The second
// populates N files per size under DIR, mounts them and prints `rig-metric` lines
// (guests/README.md).
#define FUSE_USE_VERSION 34

#include "core/path_class.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <fuse_lowlevel.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rig_fuse {

namespace {

// FUSE_NOTIFY_INC_EPOCH (include/uapi/linux/fuse.h, protocol 7.44, Linux 6.16): one
// notification that makes every cached dentry stale. libfuse 3.14 has no call for it.
constexpr int k_notify_inc_epoch = 8;
constexpr unsigned k_epoch_minor = 44;
// The benchmark keeps names and attributes cached "forever", so that only the
// invalidation makes the kernel look them up again.
constexpr double k_bench_timeout = 86400;

enum class Mode { serve, bench };

struct Options {
    Mode mode = Mode::serve;
    double entry_timeout = 1.0; // libfuse's defaults
    double attr_timeout = 1.0;
    double negative_timeout = 0.0;
    bool keep_cache = false;
    bool writeback_cache = false;
    bool direct_io = false;
    // Every READDIR is a READDIRPLUS, not only a directory's first page (libfuse's
    // "auto" default), so that one walk loads the caches for every entry.
    bool always_readdirplus = false;
    std::string source;
    std::string mountpoint;
    std::string counts_file; // --counts
    std::vector<size_t> bench_sizes;
    int rounds = 100;
};

std::string proc_path(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
}

// One object the kernel knows, keyed by what identifies it on the backing filesystem.
// The O_PATH fd pins it without opening it for I/O; nlookup is the kernel's reference
// count (lookups minus forgets): at zero the kernel holds no fuse_ino_t for it any more.
struct Inode {
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    uint64_t nlookup = 0;
    // The last (parent, name) the kernel looked it up by: what inval_entry needs.
    fuse_ino_t parent = 0;
    std::string name;
    // Its path class at that lookup (core/path_class.hpp): what its requests count under.
    std::string path_class{rig::core::k_root_class};
};

struct CachedEntry {
    fuse_ino_t ino;
    fuse_ino_t parent;
    std::string name;
};

struct DirHandle {
    DIR* dir = nullptr;
    off_t offset = 0;
    struct dirent* pending = nullptr; // read but not yet returned: it did not fit

    explicit DirHandle(DIR* opened) : dir(opened) {}
    ~DirHandle() { ::closedir(dir); }
    DirHandle(const DirHandle&) = delete;
    DirHandle& operator=(const DirHandle&) = delete;
};

class Filesystem final {
public:
    Filesystem(int root_fd, const Options& options) : m_options(options) {
        struct stat st {};
        ::fstat(root_fd, &st);
        m_root.fd = root_fd;
        m_root.dev = st.st_dev;
        m_root.ino = st.st_ino;
        m_root.nlookup = 2; // never forgotten
    }
    ~Filesystem() {
        for (auto& [key, inode] : m_inodes)
            ::close(inode->fd);
        ::close(m_root.fd);
    }
    Filesystem(const Filesystem&) = delete;
    Filesystem& operator=(const Filesystem&) = delete;

    const Options& options() const { return m_options; }

    Inode& inode(fuse_ino_t ino) {
        if (ino == FUSE_ROOT_ID)
            return m_root;
        return *reinterpret_cast<Inode*>(ino);
    }
    fuse_ino_t id(Inode& inode) {
        return &inode == &m_root ? FUSE_ROOT_ID : reinterpret_cast<fuse_ino_t>(&inode);
    }

    // Looks name up under parent and counts one kernel reference. 0 or an errno.
    int lookup(fuse_ino_t parent, const char* name, fuse_entry_param& entry) {
        entry = {};
        int fd = ::openat(inode(parent).fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return errno;
        if (::fstatat(fd, "", &entry.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
            int error = errno;
            ::close(fd);
            return error;
        }
        std::lock_guard lock(m_mutex);
        ++m_lookups;
        Inode* found = nullptr;
        if (entry.attr.st_dev == m_root.dev && entry.attr.st_ino == m_root.ino) {
            found = &m_root;
        } else {
            auto key = std::make_pair(entry.attr.st_dev, entry.attr.st_ino);
            auto it = m_inodes.find(key);
            if (it == m_inodes.end()) {
                auto made = std::make_unique<Inode>();
                made->fd = fd;
                fd = -1;
                made->dev = key.first;
                made->ino = key.second;
                it = m_inodes.emplace(key, std::move(made)).first;
            }
            found = it->second.get();
        }
        if (fd >= 0)
            ::close(fd);
        ++found->nlookup;
        found->parent = parent;
        found->name = name;
        if (found != &m_root)
            found->path_class =
                rig::core::path_class(inode(parent).path_class, name, S_ISDIR(entry.attr.st_mode));
        entry.ino = id(*found);
        entry.attr_timeout = m_options.attr_timeout;
        entry.entry_timeout = m_options.entry_timeout;
        return 0;
    }

    void forget(fuse_ino_t ino, uint64_t count) {
        std::lock_guard lock(m_mutex);
        Inode& node = inode(ino);
        if (&node == &m_root)
            return;
        node.nlookup = count >= node.nlookup ? 0 : node.nlookup - count;
        if (node.nlookup == 0) {
            ::close(node.fd);
            m_inodes.erase(std::make_pair(node.dev, node.ino));
        }
    }

    // Takes back a lookup the kernel never saw: a readdirplus entry that did not fit.
    void unlookup(fuse_ino_t ino) {
        {
            std::lock_guard lock(m_mutex);
            --m_lookups;
        }
        forget(ino, 1);
    }

    uint64_t lookups() {
        std::lock_guard lock(m_mutex);
        return m_lookups;
    }

    // The class an inode's requests count under, and that of `name` in a directory (a
    // lookup, create, unlink: what the request is about is the entry, not the directory).
    std::string class_of(fuse_ino_t ino) {
        std::lock_guard lock(m_mutex);
        return inode(ino).path_class;
    }
    std::string class_of(fuse_ino_t parent, const char* name, bool is_dir) {
        std::lock_guard lock(m_mutex);
        return rig::core::path_class(inode(parent).path_class, name, is_dir);
    }

    std::vector<CachedEntry> cached_entries() {
        std::lock_guard lock(m_mutex);
        std::vector<CachedEntry> out;
        out.reserve(m_inodes.size());
        for (auto& [key, node] : m_inodes)
            out.push_back({id(*node), node->parent, node->name});
        return out;
    }

    // A directory opened for the kernel, kept until its RELEASEDIR. The kernel sends that
    // after the last close, asynchronously: an unmount can come first, and the handles
    // still open then are closed with the filesystem.
    DirHandle* open_directory(DIR* dir) {
        auto handle = std::make_unique<DirHandle>(dir);
        DirHandle* raw = handle.get();
        std::lock_guard lock(m_mutex);
        m_directories.emplace(raw, std::move(handle));
        return raw;
    }
    void release_directory(DirHandle* handle) {
        std::lock_guard lock(m_mutex);
        m_directories.erase(handle);
    }

    // The kernel's FUSE protocol minor, known once INIT has been answered.
    std::atomic<unsigned> proto_minor{0};
    std::vector<char> read_buffer;

private:
    Options m_options;
    Inode m_root;
    std::mutex m_mutex; // the benchmark reads the table while the session thread serves
    std::map<std::pair<dev_t, ino_t>, std::unique_ptr<Inode>> m_inodes;
    std::unordered_map<DirHandle*, std::unique_ptr<DirHandle>> m_directories;
    uint64_t m_lookups = 0;
};

Filesystem& fs_of(fuse_req_t req) {
    return *static_cast<Filesystem*>(fuse_req_userdata(req));
}

void reply_entry_or_error(fuse_req_t req, Filesystem& fs, fuse_ino_t parent, const char* name) {
    fuse_entry_param entry;
    if (int error = fs.lookup(parent, name, entry))
        fuse_reply_err(req, error);
    else
        fuse_reply_entry(req, &entry);
}

// Writeback caching makes the kernel read pages of files opened write-only and do
// appends itself, so the backing file must be readable and not O_APPEND.
int backing_flags(const Filesystem& fs, int flags) {
    flags &= ~O_NOFOLLOW;
    if (fs.options().writeback_cache) {
        if ((flags & O_ACCMODE) == O_WRONLY)
            flags = (flags & ~O_ACCMODE) | O_RDWR;
        flags &= ~O_APPEND;
    }
    return flags | O_CLOEXEC;
}

void set_open_flags(const Filesystem& fs, fuse_file_info* fi) {
    fi->keep_cache = fs.options().keep_cache ? 1 : 0;
    fi->direct_io = fs.options().direct_io ? 1 : 0;
}

void op_init(void* userdata, fuse_conn_info* conn) {
    auto& fs = *static_cast<Filesystem*>(userdata);
    fs.proto_minor = conn->proto_minor;
    if (fs.options().always_readdirplus)
        conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
    if (fs.options().writeback_cache) {
        if (conn->capable & FUSE_CAP_WRITEBACK_CACHE)
            conn->want |= FUSE_CAP_WRITEBACK_CACHE;
        else
            std::fprintf(stderr, "rig-fuse: the kernel cannot do writeback caching\n");
    }
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    Filesystem& fs = fs_of(req);
    fuse_entry_param entry;
    int error = fs.lookup(parent, name, entry);
    if (error == ENOENT && fs.options().negative_timeout > 0) {
        // ino 0 with a timeout is how a negative entry is cached.
        entry = {};
        entry.entry_timeout = fs.options().negative_timeout;
        fuse_reply_entry(req, &entry);
    } else if (error) {
        fuse_reply_err(req, error);
    } else {
        fuse_reply_entry(req, &entry);
    }
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
    fs_of(req).forget(ino, nlookup);
    fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
    Filesystem& fs = fs_of(req);
    for (size_t i = 0; i < count; ++i)
        fs.forget(forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
    Filesystem& fs = fs_of(req);
    struct stat st {};
    if (::fstatat(fs.inode(ino).fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_attr(req, &st, fs.options().attr_timeout);
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
    Filesystem& fs = fs_of(req);
    int fd = fs.inode(ino).fd;
    // An O_PATH fd cannot be chmod-ed, truncated or touched: go through /proc.
    std::string path = proc_path(fd);
    int result = 0;
    if (to_set & FUSE_SET_ATTR_MODE)
        result = fi ? ::fchmod(static_cast<int>(fi->fh), attr->st_mode)
                    : ::chmod(path.c_str(), attr->st_mode);
    if (result == 0 && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
        uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
        gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
        result = ::fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    }
    if (result == 0 && (to_set & FUSE_SET_ATTR_SIZE))
        result = fi ? ::ftruncate(static_cast<int>(fi->fh), attr->st_size)
                    : ::truncate(path.c_str(), attr->st_size);
    if (result == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
        struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
        if (to_set & FUSE_SET_ATTR_ATIME_NOW)
            times[0].tv_nsec = UTIME_NOW;
        else if (to_set & FUSE_SET_ATTR_ATIME)
            times[0] = attr->st_atim;
        if (to_set & FUSE_SET_ATTR_MTIME_NOW)
            times[1].tv_nsec = UTIME_NOW;
        else if (to_set & FUSE_SET_ATTR_MTIME)
            times[1] = attr->st_mtim;
        result = fi ? ::futimens(static_cast<int>(fi->fh), times)
                    : ::utimensat(AT_FDCWD, path.c_str(), times, 0);
    }
    if (result < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    op_getattr(req, ino, fi);
}

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
    char target[PATH_MAX + 1];
    ssize_t length = ::readlinkat(fs_of(req).inode(ino).fd, "", target, PATH_MAX);
    if (length < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    target[length] = '\0';
    fuse_reply_readlink(req, target);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
    Filesystem& fs = fs_of(req);
    if (::mknodat(fs.inode(parent).fd, name, mode, rdev) < 0)
        fuse_reply_err(req, errno);
    else
        reply_entry_or_error(req, fs, parent, name);
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
    Filesystem& fs = fs_of(req);
    if (::mkdirat(fs.inode(parent).fd, name, mode) < 0)
        fuse_reply_err(req, errno);
    else
        reply_entry_or_error(req, fs, parent, name);
}

void op_symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
    Filesystem& fs = fs_of(req);
    if (::symlinkat(target, fs.inode(parent).fd, name) < 0)
        fuse_reply_err(req, errno);
    else
        reply_entry_or_error(req, fs, parent, name);
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
    Filesystem& fs = fs_of(req);
    // AT_EMPTY_PATH links the O_PATH fd itself (needs CAP_DAC_READ_SEARCH: rig-fuse
    // runs as root in the guest).
    if (::linkat(fs.inode(ino).fd, "", fs.inode(new_parent).fd, new_name, AT_EMPTY_PATH) < 0)
        fuse_reply_err(req, errno);
    else
        reply_entry_or_error(req, fs, new_parent, new_name);
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
    int result = ::unlinkat(fs_of(req).inode(parent).fd, name, 0);
    fuse_reply_err(req, result < 0 ? errno : 0);
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
    int result = ::unlinkat(fs_of(req).inode(parent).fd, name, AT_REMOVEDIR);
    fuse_reply_err(req, result < 0 ? errno : 0);
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
               const char* new_name, unsigned int flags) {
    Filesystem& fs = fs_of(req);
    int result = ::renameat2(fs.inode(parent).fd, name, fs.inode(new_parent).fd, new_name, flags);
    fuse_reply_err(req, result < 0 ? errno : 0);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Filesystem& fs = fs_of(req);
    int fd = ::open(proc_path(fs.inode(ino).fd).c_str(), backing_flags(fs, fi->flags));
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fi->fh = static_cast<uint64_t>(fd);
    set_open_flags(fs, fi);
    fuse_reply_open(req, fi);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
               fuse_file_info* fi) {
    Filesystem& fs = fs_of(req);
    int fd = ::openat(fs.inode(parent).fd, name, backing_flags(fs, fi->flags | O_CREAT), mode);
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fuse_entry_param entry;
    if (int error = fs.lookup(parent, name, entry)) {
        ::close(fd);
        fuse_reply_err(req, error);
        return;
    }
    fi->fh = static_cast<uint64_t>(fd);
    set_open_flags(fs, fi);
    fuse_reply_create(req, &entry, fi);
}

void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
    // One request at a time (fuse_session_loop): one buffer serves them all.
    std::vector<char>& buffer = fs_of(req).read_buffer;
    if (buffer.size() < size)
        buffer.resize(size);
    ssize_t got = ::pread(static_cast<int>(fi->fh), buffer.data(), size, offset);
    if (got < 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_buf(req, buffer.data(), static_cast<size_t>(got));
}

void op_write(fuse_req_t req, fuse_ino_t, const char* data, size_t size, off_t offset,
              fuse_file_info* fi) {
    ssize_t written = ::pwrite(static_cast<int>(fi->fh), data, size, offset);
    if (written < 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_write(req, static_cast<size_t>(written));
}

void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    // Closing a duplicate reports deferred write errors of the backing file (NFS-style)
    // without giving up the handle, which release still needs.
    int result = ::close(::dup(static_cast<int>(fi->fh)));
    fuse_reply_err(req, result < 0 ? errno : 0);
}

void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    ::close(static_cast<int>(fi->fh));
    fuse_reply_err(req, 0);
}

void op_fsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
    int fd = static_cast<int>(fi->fh);
    int result = datasync ? ::fdatasync(fd) : ::fsync(fd);
    fuse_reply_err(req, result < 0 ? errno : 0);
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    int fd = ::openat(fs_of(req).inode(ino).fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
        int error = errno;
        ::close(fd);
        fuse_reply_err(req, error);
        return;
    }
    fi->fh = reinterpret_cast<uint64_t>(fs_of(req).open_directory(dir));
    fuse_reply_open(req, fi);
}

bool is_dot_or_dotdot(const char* name) {
    return std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0;
}

// READDIR and READDIRPLUS. Plus looks each entry up and hands the kernel its attributes,
// so that one request fills the dentry and inode caches for a page of entries, as a
// `find` over a libfuse passthrough does; "." and ".." are not looked up (the kernel
// skips them and would never forget them).
void read_directory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi,
                    bool plus) {
    Filesystem& fs = fs_of(req);
    auto* handle = reinterpret_cast<DirHandle*>(fi->fh);
    if (offset != handle->offset) {
        ::seekdir(handle->dir, offset);
        handle->pending = nullptr;
        handle->offset = offset;
    }
    std::vector<char> buffer(size);
    size_t used = 0;
    while (true) {
        if (!handle->pending) {
            errno = 0;
            handle->pending = ::readdir(handle->dir);
            if (!handle->pending) {
                if (errno != 0 && used == 0) {
                    fuse_reply_err(req, errno);
                    return;
                }
                break;
            }
        }
        const char* name = handle->pending->d_name;
        off_t next = handle->pending->d_off;
        size_t needed = 0;
        if (plus) {
            fuse_entry_param entry{};
            bool looked_up = !is_dot_or_dotdot(name);
            if (!looked_up) {
                entry.attr.st_ino = handle->pending->d_ino;
                entry.attr.st_mode = static_cast<mode_t>(handle->pending->d_type) << 12;
            } else if (int error = fs.lookup(ino, name, entry)) {
                if (used == 0) {
                    fuse_reply_err(req, error);
                    return;
                }
                break;
            }
            needed =
                fuse_add_direntry_plus(req, buffer.data() + used, size - used, name, &entry, next);
            if (needed > size - used && looked_up)
                fs.unlookup(entry.ino);
        } else {
            struct stat st {};
            st.st_ino = handle->pending->d_ino;
            st.st_mode = static_cast<mode_t>(handle->pending->d_type) << 12;
            needed = fuse_add_direntry(req, buffer.data() + used, size - used, name, &st, next);
        }
        if (needed > size - used)
            break; // stays pending for the next call
        used += needed;
        handle->pending = nullptr;
        handle->offset = next;
    }
    fuse_reply_buf(req, buffer.data(), used);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
    read_directory(req, ino, size, offset, fi, false);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
    read_directory(req, ino, size, offset, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    fs_of(req).release_directory(reinterpret_cast<DirHandle*>(fi->fh));
    fuse_reply_err(req, 0);
}

void op_statfs(fuse_req_t req, fuse_ino_t ino) {
    struct statvfs st {};
    if (::fstatvfs(fs_of(req).inode(ino).fd, &st) < 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_statfs(req, &st);
}

// ---------------------------------------------------------------- request counts

// The requests this daemon serves, by FUSE opcode: the FUSE cell's side of rig's exact
// counters, as QEMU's trace is the 9p side. Counted by the daemon itself, since it sees
// every request the kernel sends and nothing else does.
enum class Request : size_t {
    lookup,
    forget,
    forget_multi,
    getattr,
    setattr,
    readlink,
    mknod,
    mkdir,
    symlink,
    link,
    unlink,
    rmdir,
    rename,
    open,
    create,
    read,
    write,
    flush,
    release,
    fsync,
    opendir,
    readdir,
    readdirplus,
    releasedir,
    statfs,
    count
};
constexpr const char* k_request_names[] = {
    "lookup",  "forget",      "forget_multi", "getattr", "setattr", "readlink", "mknod",
    "mkdir",   "symlink",     "link",         "unlink",  "rmdir",   "rename",   "open",
    "create",  "read",        "write",        "flush",   "release", "fsync",    "opendir",
    "readdir", "readdirplus", "releasedir",   "statfs"};
static_assert(std::size(k_request_names) == static_cast<size_t>(Request::count));

std::atomic<uint64_t> g_requests[static_cast<size_t>(Request::count)];

// The requests by opcode and path class (core/path_class.hpp), kept only with --counts. Past
// k_max_classes classes a new one counts as "other", so a workload that makes millions of
// folders cannot grow the daemon without bound.
constexpr size_t k_max_classes = 4096;
struct PathCounts {
    std::mutex mutex;
    bool enabled = false;
    std::unordered_map<std::string, std::array<uint64_t, static_cast<size_t>(Request::count)>>
        by_class;

    void add(Request kind, std::string path_class) {
        std::lock_guard lock(mutex);
        if (by_class.size() >= k_max_classes && by_class.count(path_class) == 0)
            path_class = "other";
        by_class[path_class][static_cast<size_t>(kind)] += 1;
    }
};
PathCounts g_paths;

// Requests about an entry of a directory (its parent and name are the handler's second
// and third arguments), and those about an inode (its second); forgets and statfs are
// about no path.
constexpr bool names_an_entry(Request kind) {
    return kind == Request::lookup || kind == Request::mknod || kind == Request::mkdir ||
           kind == Request::unlink || kind == Request::rmdir || kind == Request::rename ||
           kind == Request::create;
}
constexpr bool names_an_inode(Request kind) {
    return !names_an_entry(kind) && kind != Request::symlink && kind != Request::forget &&
           kind != Request::forget_multi && kind != Request::statfs;
}

template <Request Kind, typename... Args> void count_path(fuse_req_t req, Args... args) {
    if (!g_paths.enabled)
        return;
    Filesystem& fs = fs_of(req);
    auto tuple = std::make_tuple(args...);
    constexpr bool is_dir = Kind == Request::mkdir || Kind == Request::rmdir;
    if constexpr (names_an_entry(Kind))
        g_paths.add(Kind, fs.class_of(std::get<0>(tuple), std::get<1>(tuple), is_dir));
    else if constexpr (Kind == Request::symlink) // (link target, parent, name)
        g_paths.add(Kind, fs.class_of(std::get<1>(tuple), std::get<2>(tuple), false));
    else if constexpr (names_an_inode(Kind))
        g_paths.add(Kind, fs.class_of(std::get<0>(tuple)));
}

// An operation handler that counts its request first.
template <Request Kind, auto Handler> struct Counted;
template <Request Kind, typename... Args, void (*Handler)(fuse_req_t, Args...)>
struct Counted<Kind, Handler> {
    static void call(fuse_req_t req, Args... args) {
        g_requests[static_cast<size_t>(Kind)].fetch_add(1, std::memory_order_relaxed);
        count_path<Kind>(req, args...);
        Handler(req, args...);
    }
};

// "seq N", then "NAME COUNT" per opcode and "requests TOTAL", then "path NAME COUNT CLASS"
// per opcode and path class with a count, written whole (a rename) so that a reader never
// sees half of it.
void write_counts(const std::string& file, uint64_t seq) {
    std::string text = "seq " + std::to_string(seq) + "\n";
    uint64_t total = 0;
    for (size_t i = 0; i < std::size(k_request_names); ++i) {
        uint64_t count = g_requests[i].load(std::memory_order_relaxed);
        total += count;
        text += std::string(k_request_names[i]) + " " + std::to_string(count) + "\n";
    }
    text += "requests " + std::to_string(total) + "\n";
    {
        std::lock_guard lock(g_paths.mutex);
        for (const auto& [path_class, counts] : g_paths.by_class)
            for (size_t i = 0; i < counts.size(); ++i)
                if (counts[i] > 0)
                    text += std::string("path ") + k_request_names[i] + " " +
                            std::to_string(counts[i]) + " " + path_class + "\n";
    }
    std::string temporary = file + ".tmp";
    std::ofstream(temporary, std::ios::trunc) << text;
    std::rename(temporary.c_str(), file.c_str());
}

// SIGUSR1 is blocked in every thread (the caller blocks it before libfuse starts any),
// so this one alone receives it, outside any signal handler.
void start_count_writer(const std::string& file) {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    std::thread([file, usr1] {
        for (uint64_t seq = 1;; ++seq) {
            int signal = 0;
            if (sigwait(&usr1, &signal) != 0)
                return;
            write_counts(file, seq);
        }
    }).detach();
}

fuse_lowlevel_ops make_ops() {
    fuse_lowlevel_ops ops{};
    ops.init = op_init;
    ops.lookup = Counted<Request::lookup, op_lookup>::call;
    ops.forget = Counted<Request::forget, op_forget>::call;
    ops.forget_multi = Counted<Request::forget_multi, op_forget_multi>::call;
    ops.getattr = Counted<Request::getattr, op_getattr>::call;
    ops.setattr = Counted<Request::setattr, op_setattr>::call;
    ops.readlink = Counted<Request::readlink, op_readlink>::call;
    ops.mknod = Counted<Request::mknod, op_mknod>::call;
    ops.mkdir = Counted<Request::mkdir, op_mkdir>::call;
    ops.symlink = Counted<Request::symlink, op_symlink>::call;
    ops.link = Counted<Request::link, op_link>::call;
    ops.unlink = Counted<Request::unlink, op_unlink>::call;
    ops.rmdir = Counted<Request::rmdir, op_rmdir>::call;
    ops.rename = Counted<Request::rename, op_rename>::call;
    ops.open = Counted<Request::open, op_open>::call;
    ops.create = Counted<Request::create, op_create>::call;
    ops.read = Counted<Request::read, op_read>::call;
    ops.write = Counted<Request::write, op_write>::call;
    ops.flush = Counted<Request::flush, op_flush>::call;
    ops.release = Counted<Request::release, op_release>::call;
    ops.fsync = Counted<Request::fsync, op_fsync>::call;
    ops.opendir = Counted<Request::opendir, op_opendir>::call;
    ops.readdir = Counted<Request::readdir, op_readdir>::call;
    ops.readdirplus = Counted<Request::readdirplus, op_readdirplus>::call;
    ops.releasedir = Counted<Request::releasedir, op_releasedir>::call;
    ops.statfs = Counted<Request::statfs, op_statfs>::call;
    return ops;
}

// A mounted session: the Filesystem, the libfuse session, and its mount.
class Session final {
public:
    static std::unique_ptr<Session> mount(const Options& options, const std::string& source,
                                          const std::string& mountpoint) {
        int root_fd = ::open(source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0) {
            std::fprintf(stderr, "rig-fuse: cannot open %s: %s\n", source.c_str(),
                         std::strerror(errno));
            return nullptr;
        }
        auto session = std::unique_ptr<Session>(new Session(root_fd, options));
        // fsname and subtype make /proc/mounts say "rig-fuse ... fuse.rig-fuse".
        const char* argv[] = {"rig-fuse", "-o", "fsname=rig-fuse,subtype=rig-fuse"};
        fuse_args args = FUSE_ARGS_INIT(3, const_cast<char**>(argv));
        fuse_lowlevel_ops ops = make_ops();
        session->m_session = fuse_session_new(&args, &ops, sizeof ops, session->m_fs.get());
        fuse_opt_free_args(&args);
        if (!session->m_session)
            return nullptr;
        if (fuse_session_mount(session->m_session, mountpoint.c_str()) != 0) {
            std::fprintf(stderr, "rig-fuse: cannot mount %s\n", mountpoint.c_str());
            return nullptr;
        }
        session->m_mounted = true;
        return session;
    }
    ~Session() {
        // Unmounting aborts the connection: a session thread blocked in its read of
        // /dev/fuse gets ENODEV and its loop ends.
        if (m_session)
            fuse_session_exit(m_session);
        if (m_mounted)
            fuse_session_unmount(m_session);
        if (m_thread.joinable())
            m_thread.join();
        if (m_session)
            fuse_session_destroy(m_session);
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    fuse_session* session() { return m_session; }
    Filesystem& filesystem() { return *m_fs; }

    // Serves until the mount goes away (umount ends the loop with ENODEV) or a signal.
    int serve() {
        fuse_set_signal_handlers(m_session);
        int result = fuse_session_loop(m_session);
        fuse_remove_signal_handlers(m_session);
        return result;
    }
    // Serves on a thread; the destructor unmounts, which ends it.
    void serve_in_background() {
        m_thread = std::thread([this] { fuse_session_loop(m_session); });
    }

private:
    Session(int root_fd, const Options& options)
        : m_fs(std::make_unique<Filesystem>(root_fd, options)) {}

    std::unique_ptr<Filesystem> m_fs;
    fuse_session* m_session = nullptr;
    bool m_mounted = false;
    std::thread m_thread;
};

// ---------------------------------------------------------------- benchmark

using Clock = std::chrono::steady_clock;

// stat of every entry of dir, from a child process so that the kernel's caches are
// loaded the way another program (the FUSE invalidation benchmark used `find`) would load them:
// READDIRPLUS fills them a page at a time and the stats are then served from the cache. 0, or the
// errno of the first failure.
int walk_in_child(const std::string& dir) {
    pid_t child = ::fork();
    if (child < 0)
        return errno;
    if (child == 0) {
        DIR* stream = ::opendir(dir.c_str());
        if (!stream)
            ::_exit(errno & 0xff);
        int status = 0;
        while (struct dirent* entry = ::readdir(stream)) {
            if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0)
                continue;
            struct stat st {};
            if (::fstatat(::dirfd(stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
                status == 0)
                status = errno & 0xff;
        }
        ::closedir(stream);
        ::_exit(status);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

// Each inode the kernel holds pins an O_PATH fd: 8000 inodes need more than the
// default 1024 (soft) or 4096 (init's hard limit). Root may raise both.
void raise_fd_limit() {
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return;
    for (rlim_t wanted : {rlim_t{1} << 20, limit.rlim_max}) {
        struct rlimit raised {
            wanted, std::max(wanted, limit.rlim_max)
        };
        if (wanted > limit.rlim_cur && ::setrlimit(RLIMIT_NOFILE, &raised) == 0)
            return;
    }
}

bool populate(const std::string& dir, size_t files) {
    if (::mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST)
        return false;
    for (size_t i = 0; i < files; ++i) {
        std::string path = dir + "/f" + std::to_string(i);
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            return false;
        ::close(fd);
    }
    return true;
}

// The raw FUSE_NOTIFY_INC_EPOCH message: an out header whose error field is the
// notify code, unique 0, no payload.
int notify_increment_epoch(fuse_session* session) {
    struct {
        uint32_t len;
        int32_t error;
        uint64_t unique;
    } header{16, k_notify_inc_epoch, 0};
    ssize_t written = ::write(fuse_session_fd(session), &header, sizeof header);
    return written == static_cast<ssize_t>(sizeof header) ? 0 : -errno;
}

double micros(Clock::duration duration) {
    return std::chrono::duration<double, std::micro>(duration).count();
}

void metric(const std::string& name, double value, const char* unit) {
    std::printf("rig-metric %s %.3f %s\n", name.c_str(), value, unit);
}

int bench_one(const Options& options, size_t files, bool& epoch_supported, unsigned& proto_minor) {
    std::string source = options.source + "/n" + std::to_string(files);
    if (!populate(source, files)) {
        std::fprintf(stderr, "rig-fuse: cannot populate %s: %s\n", source.c_str(),
                     std::strerror(errno));
        return 1;
    }
    Options bench = options;
    bench.entry_timeout = k_bench_timeout;
    bench.attr_timeout = k_bench_timeout;
    bench.negative_timeout = 0;
    bench.always_readdirplus = true;
    auto session = Session::mount(bench, source, options.mountpoint);
    if (!session)
        return 1;
    session->serve_in_background();
    Filesystem& fs = session->filesystem();

    double inode_total = 0, epoch_total = 0, lookup_total = 0;
    uint64_t notify_errors = 0;
    for (int round = 0; round < options.rounds; ++round) {
        uint64_t before = fs.lookups();
        if (int error = walk_in_child(options.mountpoint)) {
            std::fprintf(stderr, "rig-fuse: round %d: walking %s failed: %s\n", round,
                         options.mountpoint.c_str(), std::strerror(error));
            return 1;
        }
        lookup_total += static_cast<double>(fs.lookups() - before);
        std::vector<CachedEntry> cached = fs.cached_entries();
        // Every file must be in the kernel's cache, or the round would time less work.
        if (cached.size() < files) {
            std::fprintf(stderr, "rig-fuse: round %d: %zu of %zu inodes cached\n", round,
                         cached.size(), files);
            return 1;
        }
        Clock::time_point start = Clock::now();
        for (const CachedEntry& entry : cached) {
            if (fuse_lowlevel_notify_inval_inode(session->session(), entry.ino, 0, 0) != 0)
                ++notify_errors;
            if (fuse_lowlevel_notify_inval_entry(session->session(), entry.parent,
                                                 entry.name.c_str(), entry.name.size()) != 0)
                ++notify_errors;
        }
        inode_total += micros(Clock::now() - start);

        proto_minor = fs.proto_minor;
        epoch_supported = proto_minor >= k_epoch_minor;
        if (epoch_supported) {
            if (int error = walk_in_child(options.mountpoint)) {
                std::fprintf(stderr, "rig-fuse: walking %s failed: %s\n",
                             options.mountpoint.c_str(), std::strerror(error));
                return 1;
            }
            start = Clock::now();
            if (int error = notify_increment_epoch(session->session()); error != 0) {
                std::fprintf(stderr, "rig-fuse: FUSE_NOTIFY_INC_EPOCH failed: %s\n",
                             std::strerror(-error));
                return 1;
            }
            epoch_total += micros(Clock::now() - start);
        }
    }
    double rounds = options.rounds;
    std::string suffix = "_" + std::to_string(files);
    std::printf("rig-fuse: %zu inodes, %d rounds, kernel FUSE 7.%u\n", files, options.rounds,
                fs.proto_minor.load());
    metric("inval_inode_us" + suffix, inode_total / rounds, "us");
    metric("inval_lookups" + suffix, lookup_total / rounds, "count");
    metric("inval_notify_errors" + suffix, static_cast<double>(notify_errors), "count");
    if (epoch_supported)
        metric("inval_epoch_us" + suffix, epoch_total / rounds, "us");
    std::fflush(stdout);
    return 0;
}

int bench(const Options& options) {
    if (::mkdir(options.source.c_str(), 0755) < 0 && errno != EEXIST) {
        std::fprintf(stderr, "rig-fuse: cannot create %s: %s\n", options.source.c_str(),
                     std::strerror(errno));
        return 1;
    }
    if (::mkdir(options.mountpoint.c_str(), 0755) < 0 && errno != EEXIST) {
        std::fprintf(stderr, "rig-fuse: cannot create %s: %s\n", options.mountpoint.c_str(),
                     std::strerror(errno));
        return 1;
    }
    bool epoch_supported = false;
    unsigned proto_minor = 0;
    for (size_t files : options.bench_sizes)
        if (int status = bench_one(options, files, epoch_supported, proto_minor); status != 0)
            return status;
    metric("inval_epoch_supported", epoch_supported ? 1 : 0, "bool");
    metric("fuse_proto_minor", proto_minor, "count");
    metric("inval_rounds", options.rounds, "count");
    return 0;
}

// ---------------------------------------------------------------- options

std::optional<double> parse_seconds(const char* text) {
    char* end = nullptr;
    errno = 0;
    double value = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value >= 0) || value > 86400)
        return std::nullopt;
    return value;
}

std::optional<std::vector<size_t>> parse_sizes(const std::string& text) {
    std::vector<size_t> sizes;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        std::string part =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        char* end = nullptr;
        unsigned long value = std::strtoul(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || value == 0 || value > 1000000)
            return std::nullopt;
        sizes.push_back(value);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return sizes;
}

int usage(const char* why) {
    std::fprintf(stderr,
                 "rig-fuse: %s\n"
                 "usage: rig-fuse [--entry-timeout S] [--attr-timeout S] "
                 "[--negative-timeout S]\n"
                 "                [--keep-cache] [--writeback-cache] [--direct-io] "
                 "[--counts FILE] --source DIR MOUNTPOINT\n"
                 "       rig-fuse --bench-invalidate N[,N...] [--rounds R] --source DIR "
                 "MOUNTPOINT\n",
                 why);
    return 2;
}

} // namespace

int run(int argc, char** argv) {
    Options options;
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (arg == "--entry-timeout" || arg == "--attr-timeout" || arg == "--negative-timeout") {
            const char* text = value();
            auto seconds = text ? parse_seconds(text) : std::nullopt;
            if (!seconds)
                return usage((arg + " needs seconds between 0 and 86400").c_str());
            (arg == "--entry-timeout"  ? options.entry_timeout
             : arg == "--attr-timeout" ? options.attr_timeout
                                       : options.negative_timeout) = *seconds;
        } else if (arg == "--keep-cache") {
            options.keep_cache = true;
        } else if (arg == "--writeback-cache") {
            options.writeback_cache = true;
        } else if (arg == "--direct-io") {
            options.direct_io = true;
        } else if (arg == "--source") {
            const char* text = value();
            if (!text)
                return usage("--source needs a folder");
            options.source = text;
        } else if (arg == "--counts") {
            const char* text = value();
            if (!text)
                return usage("--counts needs a file");
            options.counts_file = text;
        } else if (arg == "--bench-invalidate") {
            const char* text = value();
            auto sizes = text ? parse_sizes(text) : std::nullopt;
            if (!sizes)
                return usage("--bench-invalidate needs inode counts such as 20,8000");
            options.mode = Mode::bench;
            options.bench_sizes = *sizes;
        } else if (arg == "--rounds") {
            const char* text = value();
            int rounds = text ? std::atoi(text) : 0;
            if (rounds < 1 || rounds > 100000)
                return usage("--rounds needs a count between 1 and 100000");
            options.rounds = rounds;
        } else if (arg.rfind("--", 0) == 0) {
            return usage(("unknown option " + arg).c_str());
        } else {
            positional.push_back(arg);
        }
    }
    if (options.source.empty() || positional.size() != 1)
        return usage("give --source DIR and one MOUNTPOINT");
    options.mountpoint = positional[0];
    raise_fd_limit();

    if (options.mode == Mode::bench)
        return bench(options);
    if (!options.counts_file.empty()) {
        g_paths.enabled = true;
        start_count_writer(options.counts_file);
    }
    auto session = Session::mount(options, options.source, options.mountpoint);
    if (!session)
        return 1;
    return session->serve() == 0 ? 0 : 1;
}

} // namespace rig_fuse

int main(int argc, char** argv) {
    return rig_fuse::run(argc, argv);
}
