// structgen._engine._core: the native engine's Python module. Exceptions are mapped here, and
// only here, to structgen's error tree.
#include <nanobind/nanobind.h>

#include <nanobind/stl/string.h>

#include <typeinfo>

#include "casters.h"

namespace structgen::py {
void bind_pool(nb::module_& m);
void bind_lazy(nb::module_& m);
void bind_vocab(nb::module_& m);
void bind_guide(nb::module_& m);
void bind_frames(nb::module_& m);
void bind_batch(nb::module_& m);
void bind_texts(nb::module_& m);
void bind_walk(nb::module_& m);
void bind_metaschema(nb::module_& m);
void bind_unique(nb::module_& m);
void bind_dfa(nb::module_& m);

void register_errors(nb::module_& m) {
    static nb::object budget = nb::module_::import_("structgen.errors").attr("CompileBudgetExceeded");
    static nb::object vocabulary = nb::module_::import_("structgen.errors").attr("VocabularyError");
    (void)m;
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const BudgetExceeded& e) {
            nb::object err = budget(e.what_, e.limit);
            PyErr_SetObject(budget.ptr(), err.ptr());
        } catch (const DeadEnd& e) {
            PyErr_SetString(vocabulary.ptr(), e.what());
        } catch (const InvalidArgument& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const OutOfRange& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        } catch (const std::bad_cast&) {  // (an argument nanobind could not convert inside a call)
            PyErr_SetString(PyExc_TypeError, "an argument of the wrong type or out of range");
        } catch (const std::bad_alloc&) {
            PyErr_SetString(PyExc_MemoryError, "the native engine ran out of memory");
        }
    });
}
}  // namespace structgen::py

NB_MODULE(_core, m) {
    m.doc() = "structgen's native engine: the expression pool, lazy automata, token tries and guides (see docs/engine.md)";
    structgen::py::register_errors(m);
    structgen::py::bind_pool(m);
    structgen::py::bind_lazy(m);
    structgen::py::bind_vocab(m);
    structgen::py::bind_guide(m);
    structgen::py::bind_frames(m);
    structgen::py::bind_batch(m);
    structgen::py::bind_texts(m);
    structgen::py::bind_walk(m);
    structgen::py::bind_metaschema(m);
    structgen::py::bind_unique(m);
    structgen::py::bind_dfa(m);
    m.attr("NOTHING") = structgen::NOTHING;
    m.attr("EPSILON") = structgen::EPSILON;
    m.attr("INF") = structgen::INF;
}
