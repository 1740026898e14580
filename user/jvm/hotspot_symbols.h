// Every name jmethodtime reads of HotSpot, declared once: libjvm's symbols
// (flags, statics, the exported VMStructs tables), the VMStructs fields, the
// continuation functions' mangled names, and the one layout HotSpot does not export.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jmt::hotspot {

// Flags: one byte each, found by libjvm's .symtab, else by VMStructs' flag table.
inline constexpr char kDTraceMethodProbes[] = "DTraceMethodProbes";
inline constexpr char kDisableAttachMechanism[] = "DisableAttachMechanism";
inline constexpr char kEnableDynamicAgentLoading[] = "EnableDynamicAgentLoading";
inline constexpr char kUseZGC[] = "UseZGC";
inline constexpr char kZGenerational[] = "ZGenerational";  // JDK 21 to 23
// The flags the runtime switch reads and writes.
inline const std::vector<std::string> kSwitchFlags = {kDTraceMethodProbes, kDisableAttachMechanism,
                                                      kEnableDynamicAgentLoading};
// Every flag read: looked up in VMStructs' flag table when .symtab is stripped.
inline const std::vector<std::string> kFlags = {kDTraceMethodProbes, kDisableAttachMechanism,
                                                kEnableDynamicAgentLoading, kUseZGC, kZGenerational};

// Statics.
inline constexpr char kVmRelease[] = "_ZN19Abstract_VM_Version12_s_vm_releaseE";                         // const char*
inline constexpr char kAllDependenciesRecorded[] = "_ZN11JvmtiExport30_all_dependencies_are_recordedE";  // bool
inline constexpr char kThreadTidOffset[] = "_ZN16java_lang_Thread11_tid_offsetE";                        // int, bytes
// The freeze, freeze_preempt (JDK 24+) and thaw HotSpot resolved for its GC at
// start-up (continuationFreezeThaw.cpp, file-local function pointers).
inline constexpr char kFreezeEntry[] = "_ZL12freeze_entry";
inline constexpr char kFreezePreemptEntry[] = "_ZL20freeze_preempt_entry";
inline constexpr char kThawEntry[] = "_ZL10thaw_entry";
// Generational ZGC (zAddress.hpp): uintptr_t.
inline constexpr char kZPointerLoadShift[] = "ZPointerLoadShift";
inline constexpr char kZPointerLoadGoodMask[] = "ZPointerLoadGoodMask";

// The VMStructs and VMTypes tables and their entry layouts (vmStructs.cpp), exported.
inline constexpr char kVMStructs[] = "gHotSpotVMStructs";
inline constexpr char kVMStructEntryArrayStride[] = "gHotSpotVMStructEntryArrayStride";
inline constexpr char kVMStructEntryTypeNameOffset[] = "gHotSpotVMStructEntryTypeNameOffset";
inline constexpr char kVMStructEntryFieldNameOffset[] = "gHotSpotVMStructEntryFieldNameOffset";
inline constexpr char kVMStructEntryIsStaticOffset[] = "gHotSpotVMStructEntryIsStaticOffset";
inline constexpr char kVMStructEntryOffsetOffset[] = "gHotSpotVMStructEntryOffsetOffset";
inline constexpr char kVMStructEntryAddressOffset[] = "gHotSpotVMStructEntryAddressOffset";
inline constexpr char kVMTypes[] = "gHotSpotVMTypes";
inline constexpr char kVMTypeEntryArrayStride[] = "gHotSpotVMTypeEntryArrayStride";
inline constexpr char kVMTypeEntryTypeNameOffset[] = "gHotSpotVMTypeEntryTypeNameOffset";
inline constexpr char kVMTypeEntrySizeOffset[] = "gHotSpotVMTypeEntrySizeOffset";
inline constexpr char kVMExportedPrefix[] = "gHotSpotVM";

// Every symbol above, the ones a libjvm file read keeps (LibjvmInfo::symbols); null-terminated.
inline constexpr const char *kLibjvmSymbols[] = {
    kDTraceMethodProbes,
    kDisableAttachMechanism,
    kEnableDynamicAgentLoading,
    kUseZGC,
    kZGenerational,
    kVmRelease,
    kAllDependenciesRecorded,
    kThreadTidOffset,
    kFreezeEntry,
    kFreezePreemptEntry,
    kThawEntry,
    kZPointerLoadShift,
    kZPointerLoadGoodMask,
    kVMStructs,
    kVMStructEntryArrayStride,
    kVMStructEntryTypeNameOffset,
    kVMStructEntryFieldNameOffset,
    kVMStructEntryIsStaticOffset,
    kVMStructEntryOffsetOffset,
    kVMStructEntryAddressOffset,
    kVMTypes,
    kVMTypeEntryArrayStride,
    kVMTypeEntryTypeNameOffset,
    kVMTypeEntrySizeOffset,
    nullptr,
};

// VMStructs fields, "Type::field".
inline constexpr char kJavaThreadVthread[] = "JavaThread::_vthread";
inline constexpr char kJavaThreadContEntry[] = "JavaThread::_cont_entry";  // JDK 24+
inline constexpr char kJavaThreadThreadObj[] = "JavaThread::_threadObj";
inline constexpr char kJavaThreadStackBase[] = "JavaThread::_stack_base";
inline constexpr char kJavaThreadStackSize[] = "JavaThread::_stack_size";
inline constexpr char kJavaThreadMethodHandleReturn[] = "JavaThread::_is_method_handle_return";
inline constexpr char kJavaThreadList[] = "ThreadsSMRSupport::_java_thread_list";  // static
inline constexpr char kThreadsListLength[] = "ThreadsList::_length";
inline constexpr char kThreadsListThreads[] = "ThreadsList::_threads";
// The flag table's type (JVMFlag from JDK 11, Flag before) and its fields: the
// table and its length (statics), a flag's name and address (offsets).
inline constexpr char kFlagType[] = "JVMFlag";
inline constexpr char kFlagTypeJdk8[] = "Flag";
inline constexpr char kFlagTableField[] = "flags";
inline constexpr char kFlagCountField[] = "numFlags";
inline constexpr char kFlagNameField[] = "_name";
inline constexpr char kFlagAddressField[] = "_addr";

// JDK 21 to 23 do not name JavaThread::_cont_entry; javaThread.hpp places it
// after _is_method_handle_return (int), _jni_active_critical (int),
// _pending_jni_exception_check_fn (char*), _depth_first_number,
// _popframe_condition and _frames_to_pop_failed_realloc (ints) and 4 bytes of
// padding (bytes), followed by _cont_fastpath (intptr_t*, +8),
// _cont_fastpath_thread_state (int padded to 8, +16) and _held_monitor_count (int64_t, +24).
inline constexpr uint64_t kContEntryAfterMethodHandleReturn = 32;
inline constexpr uint64_t kContFastpathAfterContEntry = 8;
inline constexpr uint64_t kFastpathStateAfterContEntry = 16;
inline constexpr uint64_t kHeldMonitorsAfterContEntry = 24;

// Generational ZGC (zAddress.hpp): 4 remapped bits from bit 12 of a coloured
// pointer, one set; ZPointerLoadShift is the current good one's + 1.
inline constexpr uint64_t kZPointerRemappedShift = 12;

// The continuation functions the virtual-thread hooks attach to, by their
// mangled names: every instantiation of freeze<Config<...>>(JavaThread*, long*),
// Config<...>::freeze_preempt(JavaThread*, long*) (JDK 24+) and
// thaw<Config<...>>(JavaThread*, int).
inline constexpr char kFreezePrefix[] = "_Z6freezeI6Config";
inline constexpr char kFreezePreemptPrefix[] = "_ZN6Config";
inline constexpr char kFreezePreemptSuffix[] = "14freeze_preemptEP10JavaThreadPl";
inline constexpr char kThawPrefix[] = "_Z4thawI6Config";

}  // namespace jmt::hotspot
