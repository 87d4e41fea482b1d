/* placeholder: being written */
typedef int sw_placeholder_;
