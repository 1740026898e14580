// A background thread that blocks every signal, so that SIGINT and SIGTERM
// stay with the session's threads.
#pragma once

#include <signal.h>

#include <thread>
#include <utility>

namespace jmt {

template <typename Fn>
std::thread start_quiet_thread(Fn &&fn)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    std::thread t(std::forward<Fn>(fn));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
}

}  // namespace jmt
