#include "loader/vthread_hooks.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>

#include "jmethodtime.h"
#include "jmethodtime.skel.h"
#include "jvm/jvm.h"
#include "util/error.h"
#include "util/quiet_thread.h"

namespace jmt {

namespace {

// How long a launched JVM may take to initialise its layout (s): past it the
// watch gives up and the JVM's virtual threads are not followed.
constexpr auto kLayoutPatience = std::chrono::seconds(120);

LinkPtr attach_uprobe(bpf_program *prog, bool ret, int pid, const std::string &libjvm, uint64_t file_offset)
{
    bpf_link *link = bpf_program__attach_uprobe(prog, ret, pid, libjvm.c_str(), file_offset);
    if (!link) {
        const int err = errno;
        throw Error(
            "attaching the virtual-thread hook at " + libjvm + "+0x" +
                [file_offset] {
                    char b[32];
                    snprintf(b, sizeof(b), "%llx", static_cast<unsigned long long>(file_offset));
                    return std::string(b);
                }() +
                " failed: " + errno_text(err),
            err);
    }
    return LinkPtr(link);
}

}  // namespace

HooksByLibjvm find_hooks(const std::vector<VthreadTarget> &targets)
{
    HooksByLibjvm out;
    for (const VthreadTarget &t : targets) {
        if (out.count(t.libjvm))
            continue;
        try {
            out[t.libjvm] = inspect_libjvm(t.libjvm);
        } catch (const Error &) {
            out[t.libjvm] = {};  // unreadable: no hook
        }
    }
    return out;
}

bool any_hooks(const HooksByLibjvm &hooks)
{
    return std::any_of(hooks.begin(), hooks.end(), [](const auto &h) { return h.second.continuation.found(); });
}

VthreadHooks::VthreadHooks(jmethodtime_bpf *skel, std::vector<VthreadTarget> targets, HooksByLibjvm by_libjvm,
                           bool whole, unsigned poll_ms)
    : skel_(skel), targets_(std::move(targets)), layouts_(targets_.size()), memories_(targets_.size()), whole_(whole)
{
    for (size_t i = 0; i < targets_.size(); i++) {
        const std::string &libjvm = targets_[i].libjvm;
        libjvms_.push_back(by_libjvm[libjvm]);
        if (!libjvms_[i].continuation.found()) {
            layouts_[i].state = VthreadLayout::State::Unsupported;
            layouts_[i].why = "its libjvm.so has no symbol table (.symtab) naming HotSpot's freeze and thaw";
        }
    }
    if (resolve())
        return;
    thread_ = start_quiet_thread([this, poll_ms] {
        const auto until = std::chrono::steady_clock::now() + kLayoutPatience;
        while (!stop_ && !resolve() && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
    });
}

VthreadHooks::~VthreadHooks()
{
    stop_ = true;
    if (thread_.joinable())
        thread_.join();
}

bool VthreadHooks::resolve()
{
    std::lock_guard<std::mutex> lock(mutex_);
    bool pending = false;
    for (size_t i = 0; i < targets_.size() && i < JMT_MAX_TARGETS; i++) {
        if (layouts_[i].state != VthreadLayout::State::Pending)
            continue;
        if (!memories_[i])
            memories_[i] = libjvm_memory(targets_[i].pid, libjvms_[i]);
        if (memories_[i])
            layouts_[i] = read_vthread_layout(*memories_[i]);
        if (layouts_[i].state == VthreadLayout::State::Pending) {
            pending = true;
            continue;
        }
        if (layouts_[i].state != VthreadLayout::State::Ready || !attach(i))
            continue;
        jmt_vt_layout &out = program_globals(skel_).vt_layouts[i];
        out.vthread_offset = layouts_[i].vthread_offset;
        out.tid_offset = layouts_[i].tid_offset;
        out.stack_base_offset = layouts_[i].stack_base_offset;
        out.stack_size_offset = layouts_[i].stack_size_offset;
        out.zpointer_remapped_shift = layouts_[i].zpointer_remapped_shift;
        // The programs take a layout once its entry offset is set: it goes last.
        __atomic_store_n(&out.cont_entry_offset, layouts_[i].cont_entry_offset, __ATOMIC_RELEASE);
    }
    return !pending;
}

bool VthreadHooks::attach(size_t i)
{
    const VthreadLayout &l = layouts_[i];
    const ContinuationHooks &h = libjvms_[i].continuation;
    auto chosen = [](const std::vector<LibjvmFunction> &all, std::initializer_list<uint64_t> vaddrs) {
        std::vector<LibjvmFunction> out;
        for (const LibjvmFunction &f : all)
            if (std::find(vaddrs.begin(), vaddrs.end(), f.vaddr) != vaddrs.end())
                out.push_back(f);
        return out.empty() ? all : out;  // none matches: every instantiation, one of them runs
    };
    const int pid = whole_ ? -1 : targets_[i].pid;
    const size_t links_before = links_.size();
    std::vector<Site> added;
    auto hook = [&](bpf_program *entry, bpf_program *ret, const LibjvmFunction &f) {
        const Site site{targets_[i].libjvm, pid, f.file_offset};
        if (attached_.count(site))
            return;  // the libjvm's, for every process: attached for another target
        links_.push_back(attach_uprobe(entry, false, pid, site.libjvm, f.file_offset));
        links_.push_back(attach_uprobe(ret, true, pid, site.libjvm, f.file_offset));
        attached_.insert(site);
        added.push_back(site);
    };
    try {
        for (const LibjvmFunction &f : chosen(h.freeze, {l.freeze_vaddr, l.freeze_preempt_vaddr}))
            hook(skel_->progs.handle_freeze, skel_->progs.handle_freeze_ret, f);
        for (const LibjvmFunction &f : chosen(h.thaw, {l.thaw_vaddr}))
            hook(skel_->progs.handle_thaw, skel_->progs.handle_thaw_ret, f);
    } catch (const Error &e) {
        // None of this JVM's hooks stays: an entry without its return would misread the frames.
        links_.resize(links_before);
        for (const Site &site : added)
            attached_.erase(site);
        layouts_[i].state = VthreadLayout::State::Unsupported;
        layouts_[i].why = e.what();
        return false;
    }
    return true;
}

std::string VthreadHooks::not_followed() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < layouts_.size(); i++) {
        const std::string who = layouts_.size() > 1 ? "pid " + std::to_string(targets_[i].pid) + ": " : "";
        if (layouts_[i].state == VthreadLayout::State::Unsupported)
            return who + layouts_[i].why;
        if (layouts_[i].state == VthreadLayout::State::Pending)
            return who + (layouts_[i].why.empty() ? "the JVM's thread layout could not be read" : layouts_[i].why);
    }
    return "";
}

}  // namespace jmt
